@preconcurrency import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The simulator's TLS identity: a certificate chain and key, given (`--tls-cert`, `--tls-key`) or created on first
/// use in the state folder as a private CA (`ca.pem`) and a loopback server certificate signed by it, so that
/// clients trust the simulator through `BLIMP_APNS_CA_FILE=<state>/ca.pem`.
public struct SimulatorTLS: Sendable {
    /// The PEM certificate chain the server presents.
    public let certificateChainPEM: String
    /// The server key, PEM.
    public let privateKeyPEM: String
    /// The CA certificate file clients should trust, when the simulator created its own.
    public let caFile: String?

    /// Reads a given certificate and key.
    public static func load(certificateFile: String, keyFile: String) throws -> SimulatorTLS {
        SimulatorTLS(
            certificateChainPEM: try String(contentsOfFile: certificateFile, encoding: .utf8),
            privateKeyPEM: try String(contentsOfFile: keyFile, encoding: .utf8),
            caFile: nil
        )
    }

    /// The CA and server certificate in `folder`, created there on first use (valid for ten years, for
    /// `localhost`, `127.0.0.1`, `::1` and the DNS `names`, such as the simulator's host name in a container network).
    /// Stored files whose certificate lacks one of `names` are replaced, CA included.
    public static func loadOrCreate(in folder: String, names: [String] = []) throws -> SimulatorTLS {
        let paths = (ca: "\(folder)/ca.pem", certificate: "\(folder)/server.pem", key: "\(folder)/server-key.pem")
        if FileManager.default.fileExists(atPath: paths.certificate), FileManager.default.fileExists(atPath: paths.key),
            FileManager.default.fileExists(atPath: paths.ca)
        {
            let tls = try Self.load(certificateFile: paths.certificate, keyFile: paths.key)
            if try names.isEmpty || Set(names).isSubset(of: Self.dnsNames(inChain: tls.certificateChainPEM)) {
                return SimulatorTLS(certificateChainPEM: tls.certificateChainPEM, privateKeyPEM: tls.privateKeyPEM, caFile: paths.ca)
            }
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let (caPEM, certificatePEM, keyPEM) = try Self.makeCertificates(names: names)
        try caPEM.write(toFile: paths.ca, atomically: true, encoding: .utf8)
        try certificatePEM.write(toFile: paths.certificate, atomically: true, encoding: .utf8)
        try keyPEM.write(toFile: paths.key, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: paths.key)
        return SimulatorTLS(certificateChainPEM: certificatePEM, privateKeyPEM: keyPEM, caFile: paths.ca)
    }

    /// The server-side TLS configuration: TLS 1.2 or later, ALPN `h2` only.
    func serverConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(self.certificateChainPEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(self.privateKeyPEM.utf8), format: .pem))
        )
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["h2"]
        return configuration
    }

    /// The DNS names the chain's first certificate is valid for.
    private static func dnsNames(inChain pem: String) throws -> Set<String> {
        let certificate = try Certificate(pemEncoded: pem)
        let names = try certificate.extensions.subjectAlternativeNames ?? SubjectAlternativeNames()
        return Set(names.compactMap { if case .dnsName(let name) = $0 { name } else { nil } })
    }

    private static func makeCertificates(names: [String]) throws -> (ca: String, certificate: String, key: String) {
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("Blimp APNs simulator CA") }
        let ca = try Self.certificate(
            subject: caName,
            publicKey: caKey.publicKey,
            issuer: caName,
            issuerKey: caKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            }
        )
        let serverKey = P256.Signing.PrivateKey()
        let server = try Self.certificate(
            subject: try DistinguishedName { CommonName("localhost") },
            publicKey: serverKey.publicKey,
            issuer: caName,
            issuerKey: caKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(
                    [
                        .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                        .ipAddress(ASN1OctetString(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
                    ] + names.map { .dnsName($0) })
            }
        )
        return (try ca.serializeAsPEM().pemString, try server.serializeAsPEM().pemString, serverKey.pemRepresentation)
    }

    /// A certificate valid from an hour ago for ten years, signed with ECDSA P-256.
    private static func certificate(
        subject: DistinguishedName,
        publicKey: P256.Signing.PublicKey,
        issuer: DistinguishedName,
        issuerKey: P256.Signing.PrivateKey,
        extensions: Certificate.Extensions
    ) throws -> Certificate {
        let now = Date()
        return try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(publicKey),
            notValidBefore: now - 3600,
            notValidAfter: now + 10 * 365 * 86400,
            issuer: issuer,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: .init(issuerKey)
        )
    }
}

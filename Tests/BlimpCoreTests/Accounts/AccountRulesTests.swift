import Foundation
import Testing

@testable import BlimpCore

@Suite struct PasswordHashTests {
    /// Cheap parameters, so the suite stays fast; ``PasswordHash/Parameters/current`` is tested once below.
    static let cheap = PasswordHash.Parameters(logRounds: 10, blockSize: 8, parallelism: 1)

    @Test func aHashVerifiesItsPasswordOnly() throws {
        let hash = PasswordHash(password: "correct horse battery", parameters: Self.cheap)
        #expect(hash.verify("correct horse battery"))
        #expect(!hash.verify("correct horse battery "))
        #expect(!hash.verify(""))
        let stored = try #require(PasswordHash(stored: hash.description))
        #expect(stored == hash && stored.verify("correct horse battery"))
        #expect(hash.description.hasPrefix("scrypt$10$8$1$"))
    }

    @Test func theCurrentParametersRoundTrip() throws {
        let hash = PasswordHash(password: "a long enough password")
        #expect(hash.parameters == .current && !hash.needsUpgrade)
        #expect(try #require(PasswordHash(stored: hash.description)).verify("a long enough password"))
    }

    /// A hash made under older parameters still verifies under its own, and says it wants a stronger one.
    @Test func storedParametersAreUsedAndOldOnesUpgraded() throws {
        let old = PasswordHash(password: "an older password", parameters: Self.cheap)
        let read = try #require(PasswordHash(stored: old.description))
        #expect(read.parameters == Self.cheap && read.verify("an older password") && read.needsUpgrade)
        #expect(PasswordHash(password: "x", parameters: Self.cheap).description != old.description)  // salted
    }

    @Test(arguments: ["", "scrypt$10$8$1$AAAA", "bcrypt$10$8$1$AAAA$AAAA", "scrypt$40$8$1$AAAAAAAAAAAAAAAAAAAAAA==$" + String(repeating: "A", count: 44)])
    func damagedHashesAreNotRead(_ stored: String) {
        #expect(PasswordHash(stored: stored) == nil)
    }
}

@Suite struct AccountRulesTests {
    @Test(arguments: ["Ann@Example.com", " ann@example.com ", "a.b+c@sub.example.org"])
    func wellFormedEmailsAreLowerCased(_ text: String) throws {
        let email = try EmailAddress(text)
        #expect(email.value == email.value.lowercased() && email.value.contains("@"))
    }

    @Test(arguments: [
        "", "ann", "ann@", "@example.com", "ann@example", "ann@@example.com", "ann example@example.com", "ann@example..com",
        "<ann>@example.com", String(repeating: "a", count: 250) + "@example.com", "ann@exa\u{0}mple.com",
    ])
    func malformedEmailsAreRefused(_ text: String) {
        #expect(throws: AccountRuleError.malformedEmail) { try EmailAddress(text) }
    }

    @Test func passwordsAre12To1024Bytes() throws {
        #expect(throws: AccountRuleError.passwordLength) { try Password.checked("elevenchars") }
        #expect(throws: AccountRuleError.passwordLength) { try Password.checked(String(repeating: "x", count: 10 * 1024)) }
        #expect(try Password.checked("twelve chars") == "twelve chars")
        #expect(try Password.checked(String(repeating: "é", count: 512)).utf8.count == 1024)
        #expect(try Password.checked(Password.generate()).utf8.count == 44)
    }

    @Test func rolesAreOrderedAndNamed() throws {
        #expect(ConsoleRole.viewer < .sender && ConsoleRole.sender < .admin)
        #expect(!ConsoleRole.viewer.maySend && ConsoleRole.sender.maySend && !ConsoleRole.sender.mayAdminister && ConsoleRole.admin.mayAdminister)
        #expect(try ConsoleRole(named: "sender") == .sender)
        #expect(throws: AccountRuleError.unknownRole("owner")) { try ConsoleRole(named: "owner") }
    }
}

@Suite struct TOTPTests {
    /// RFC 6238 Appendix B's SHA-1 vectors: the ASCII secret "12345678901234567890", 8 digits.
    @Test(arguments: [
        (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
        (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
    ] as [(Int64, String)])
    func rfc6238Vectors(_ time: Int64, _ code: String) {
        let totp = TOTP(secret: Array("12345678901234567890".utf8))
        let step = TOTP.timeStep(at: Date(timeIntervalSince1970: TimeInterval(time)))
        #expect(totp.code(step: step, digits: 8) == code)
        #expect(totp.code(step: step) == String(code.suffix(6)))
    }

    @Test func aCodeIsAcceptedInItsWindowOnce() throws {
        let totp = TOTP.generate()
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let step = TOTP.timeStep(at: now)
        #expect(totp.acceptedStep(for: totp.code(step: step), at: now, after: nil) == step)
        #expect(totp.acceptedStep(for: totp.code(step: step - 1), at: now, after: nil) == step - 1)
        #expect(totp.acceptedStep(for: totp.code(step: step + 1), at: now, after: nil) == step + 1)
        #expect(totp.acceptedStep(for: totp.code(step: step - 2), at: now, after: nil) == nil)
        // Replayed: the step was accepted already, and so was every earlier one.
        #expect(totp.acceptedStep(for: totp.code(step: step), at: now, after: step) == nil)
        #expect(totp.acceptedStep(for: totp.code(step: step - 1), at: now, after: step) == nil)
        let code = totp.code(step: step)
        #expect(totp.acceptedStep(for: String(code.prefix(3)) + " " + String(code.suffix(3)), at: now, after: nil) == step)
        for wrong in ["", "12345", "1234567", "abcdef", String(repeating: "9", count: 10_000)] {
            #expect(totp.acceptedStep(for: wrong, at: now, after: nil) == nil)
        }
    }

    @Test func secretsRoundTripThroughBase32AndTheURI() throws {
        let rfc = TOTP(secret: Array("12345678901234567890".utf8))
        #expect(rfc.base32Secret == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        let totp = TOTP.generate()
        #expect(TOTP(base32Secret: totp.base32Secret.lowercased()) == totp)
        #expect(TOTP(base32Secret: "not base32!") == nil)
        let uri = totp.uri(account: "ann@example.com", issuer: "Blimp")
        #expect(uri.hasPrefix("otpauth://totp/Blimp:ann@example.com?secret=\(totp.base32Secret)&issuer=Blimp"))
        #expect(uri.hasSuffix("&algorithm=SHA1&digits=6&period=30"))
    }
}

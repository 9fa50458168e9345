import BlimpCore
import BlimpStore
import Foundation

/// What `blimp apps create` prints: the credentials, shown this once.
struct CreatedApp: Codable {
    let appKey: String
    let appSecret: String
    let masterSecret: String
    let name: String
    let bundleID: String

    init(app: NewApp, credentials: AppCredentials) {
        self.appKey = credentials.appKey
        self.appSecret = credentials.appSecret
        self.masterSecret = credentials.masterSecret
        self.name = app.name
        self.bundleID = app.bundleID
    }

    enum CodingKeys: String, CodingKey {
        case appKey = "app_key"
        case appSecret = "app_secret"
        case masterSecret = "master_secret"
        case name
        case bundleID = "bundle_id"
    }

    func json() throws -> String {
        String(decoding: try AppListing.encoder.encode(self), as: UTF8.self)
    }
}

/// How `blimp apps list` prints apps, `blimp apps token list` an app's tokens and `blimp accounts list` people.
enum AppListing {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()

    static func json(_ rows: some Encodable) throws -> String {
        String(decoding: try Self.encoder.encode(rows), as: UTF8.self)
    }

    static func table(_ apps: [App]) -> String {
        let header = ["NAME", "APP KEY", "BUNDLE ID", "APNS", "KEY ID", "TEAM ID", "CREATED"]
        let rows = apps.map { app in
            [
                app.name, app.appKey, app.bundleID, app.apnsEnvironment.rawValue, app.apnsKeyID, app.apnsTeamID,
                app.createdAt.formatted(.iso8601),
            ]
        }
        return Self.table(header: header, rows: rows)
    }

    static func table(_ tokens: [APITokenInfo]) -> String {
        Self.table(header: ["NAME", "CREATED", "ID"], rows: tokens.map { [$0.name, $0.createdAt.formatted(.iso8601), $0.id.lowercaseString] })
    }

    static func table(_ accounts: [AccountListing]) -> String {
        Self.table(
            header: ["EMAIL", "APP KEY", "ROLE", "TOTP", "CREATED"],
            rows: accounts.map {
                [$0.email, $0.appKey ?? "-", $0.role?.rawValue ?? "-", $0.totpEnabled ? "on" : "off", $0.createdAt.formatted(.iso8601)]
            })
    }

    /// Columns padded to their widest cell, two spaces apart.
    private static func table(header: [String], rows: [[String]]) -> String {
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max()! }
        return ([header] + rows)
            .map { row in
                zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                    .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
            }
            .joined(separator: "\n")
    }
}

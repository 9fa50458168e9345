import ArgumentParser
import BlimpStore

/// `blimp apps device-association`: whether the SDK's identify call may associate a device with a named user.
struct DeviceAssociationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-association",
        abstract: "Allow or deny devices associating themselves with named users (deny: only the server API associates).",
        discussion: """
            The stock SDK's identify call carries no proof from the app's backend, so anyone holding the app secret \
            (it ships inside the app) can claim a named user's pushes. With deny, a device's identify only resolves \
            its contact, and POST /api/named_users/associate (master secret) is the only way to associate.
            """
    )

    enum Setting: String, ExpressibleByArgument, CaseIterable {
        case allow, deny
    }

    @Option(help: "The app's key.") var appKey: String
    @Argument(help: "allow or deny.") var setting: Setting
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        try await self.database.withAppStore(logging: self.logging) {
            try await $0.setDeviceAssociation(self.setting == .allow, appKey: self.appKey)
        }
        print("device association: \(self.setting.rawValue)")
    }
}

import ArgumentParser
import BlimpCore
import BlimpStore

/// `blimp apps budget`: sets an app's Live Activity budgets, which workers apply per token and per device.
struct BudgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "budget",
        abstract: "Set an app's Live Activity budgets (priority-10 pushes per token, push-to-start pushes per device, per hour)."
    )

    @Option(help: "The app's key.") var appKey: String
    @Option(help: "Priority-10 pushes per update token per hour.") var perHour = PriorityBudget().perHour
    @Option(help: "The same, for channels that allow frequent updates.") var frequentPerHour = PriorityBudget().frequentPerHour
    @Option(help: "Push-to-start pushes per device per hour.") var startsPerHour = PriorityBudget().startsPerHour
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        guard self.perHour >= 0, self.frequentPerHour >= 0, self.startsPerHour >= 0 else {
            throw CLIError("budgets cannot be negative")
        }
        let budget = PriorityBudget(perHour: self.perHour, frequentPerHour: self.frequentPerHour, startsPerHour: self.startsPerHour)
        try await self.database.withAppStore(logging: self.logging) { try await $0.setBudget(budget, appKey: self.appKey) }
        print("budget: \(budget.perHour) per hour, \(budget.frequentPerHour) with frequent updates, \(budget.startsPerHour) starts per hour")
    }
}

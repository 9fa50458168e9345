import ArgumentParser
import Foundation

/// A length of time on the command line: a number of seconds, or a number with a unit, `s`, `m`, `h` or `d`
/// (`90`, `45m`, `12h`, `7d`, `1.5h`).
struct DurationArgument: ExpressibleByArgument, Sendable {
    let seconds: TimeInterval

    init?(argument: String) {
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        let (number, unit) = argument.last.flatMap { units[$0] }.map { (argument.dropLast(), $0) } ?? (Substring(argument), 1)
        guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
        self.seconds = value * unit
    }
}

import BlimpStore
import Foundation

/// The overview's chart of APNs sends per minute over the last hour, as SVG built here (numbers only: nothing from
/// devices goes into it): a stacked bar a minute, delivered (200), refused (4xx but 429) and failed (no answer, 429,
/// 5xx).
enum SendsChart {
    static let minutes = 60
    static let width = 900
    static let height = 160

    enum Outcome: Int, CaseIterable {
        case delivered, refused, failed

        init(status: Int) {
            switch status {
            case 200: self = .delivered
            case 400..<500 where status != 429: self = .refused
            default: self = .failed
            }
        }

        var cssClass: String { "bar-\(self)" }
    }

    static func svg(_ tallies: [SendTally], now: Date) -> String {
        let end = Int(now.timeIntervalSince1970) / 60
        var bars = Array(repeating: [0, 0, 0], count: Self.minutes)
        for tally in tallies {
            let index = Self.minutes - 1 - (end - Int(tally.minute.timeIntervalSince1970) / 60)
            guard bars.indices.contains(index) else { continue }
            bars[index][Outcome(status: tally.status).rawValue] += tally.sends
        }
        let peak = max(1, bars.map { $0.reduce(0, +) }.max() ?? 1)
        let total = bars.reduce(0) { $0 + $1.reduce(0, +) }
        let slot = Double(Self.width) / Double(Self.minutes)
        var svg = """
            <svg id="sends-chart" viewBox="0 0 \(Self.width) \(Self.height + 20)" role="img" \
            aria-label="APNs sends per minute over the last hour: \(total) in all, at most \(peak) in a minute">
            """
        for (index, counts) in bars.enumerated() {
            var top = Double(Self.height)
            for outcome in Outcome.allCases where counts[outcome.rawValue] > 0 {
                let height = Double(counts[outcome.rawValue]) / Double(peak) * Double(Self.height)
                top -= height
                svg += String(
                    format: "<rect class=\"%@\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>%d min ago: %d %@</title></rect>",
                    outcome.cssClass, Double(index) * slot + 1, top, slot - 2, height, Self.minutes - 1 - index,
                    counts[outcome.rawValue], "\(outcome)")
            }
        }
        svg += """
            <line class="axis" x1="0" y1="\(Self.height)" x2="\(Self.width)" y2="\(Self.height)"/>\
            <text x="0" y="\(Self.height + 16)">60 min ago</text>\
            <text x="\(Self.width)" y="\(Self.height + 16)" text-anchor="end">now · peak \(peak)/min</text></svg>
            """
        return svg
    }
}

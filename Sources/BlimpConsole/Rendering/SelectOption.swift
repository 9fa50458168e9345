/// One `<option>` of a form's `<select>`, as the templates render it.
struct SelectOption: Sendable {
    let value: String
    let label: String
    let selected: Bool
}

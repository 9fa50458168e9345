import BlimpCore
import BlimpStore
import HTTPTypes

/// Why a console request was not served: each is answered with a page, never a stack trace or a secret.
enum ConsoleError: Error {
    /// No session, or it expired: go and sign in.
    case signIn
    /// Nothing here for this session: unknown ids and other apps' ids look the same.
    case notFound
    /// What was here aged out of its retention and was deleted (why, in words).
    case expired(String)
    /// A form without this session's CSRF token.
    case staleForm
    /// The person's role in the app is below what the page or action needs.
    case forbidden(ConsoleRole)
    /// The request cannot be understood (a form too large, a field missing).
    case badRequest(String)
    /// The database is unavailable or failed.
    case unavailable

    var status: HTTPResponse.Status {
        switch self {
        case .signIn: .seeOther
        case .notFound, .expired: .notFound
        case .staleForm, .forbidden: .forbidden
        case .badRequest: .badRequest
        case .unavailable: .serviceUnavailable
        }
    }

    var message: String {
        switch self {
        case .signIn: "Please sign in."
        case .notFound: "There is nothing here, or it belongs to another app."
        case .staleForm: "The form has expired or did not come from this console. Reload the page and try again."
        case .forbidden(let role): "This needs the \(role.rawValue) role in this app. Ask one of the app's admins."
        case .badRequest(let why), .expired(let why): why
        case .unavailable: "The database is unavailable. Try again in a moment."
        }
    }

    /// A store failure as the console tells it.
    static func from(_ error: any Error) -> ConsoleError {
        switch error {
        case let error as ConsoleError: error
        case StoreError.notFound: .notFound
        default: .unavailable
        }
    }

    /// Whether the store refused what was asked (a duplicate, a value out of range, no such app), which the page says,
    /// rather than failing to answer.
    static func isRefusal(_ error: StoreError) -> Bool {
        switch error {
        case .database, .unavailable: false
        case .notFound, .noSuchApp, .duplicate, .invalid, .unreadableSecret: true
        }
    }
}

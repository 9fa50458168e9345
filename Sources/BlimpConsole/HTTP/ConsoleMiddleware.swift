import BlimpCore
import HTTPTypes
import Hummingbird
import Logging

/// Answers every console request's failure with a page (or, for a missing session, a redirect to sign in), and sets
/// the headers that keep pages from being framed, sniffed or given outside scripts. A page's script asking for JSON
/// without a session is told 401 rather than sent to the sign-in page: a sign-in page fetched in the background would
/// set the browser a new sign-in token, and the form on screen would no longer match it.
struct ConsoleMiddleware<Context: RequestContext>: RouterMiddleware {
    let renderer: PageRenderer

    static var securityHeaders: HTTPFields {
        [
            .contentSecurityPolicy:
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "same-origin",
            HTTPField.Name("X-Frame-Options")!: "DENY",
        ]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as ConsoleError {
            response = self.answer(error, to: request)
        } catch let error as HTTPResponseError where error.status == .notFound {
            response = self.answer(.notFound, to: request)
        } catch {
            context.logger.error("console request failed", metadata: ["error": "\(error)"])
            response = self.answer(.unavailable, to: request)
        }
        for field in Self.securityHeaders { response.headers.append(field) }
        return response
    }

    private func answer(_ error: ConsoleError, to request: Request) -> Response {
        if case .signIn = error {
            guard request.headers[.accept]?.contains("application/json") == true else { return PageRenderer.redirect(to: "/console/login") }
            return PageRenderer.json(.object([.init("ok", .bool(false)), .init("error", .string(error.message))]), status: .unauthorized)
        }
        let view = MessagePage.View(heading: error.status.reasonPhrase, message: error.message, signIn: false)
        return self.renderer.page("message", title: error.status.reasonPhrase, nav: nil, view, status: error.status)
    }
}

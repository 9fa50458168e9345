import BlimpCore
import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// Renders console pages from their Mustache templates. `{{…}}` escapes HTML, so whatever devices sent (tags, names,
/// attributes) shows as text; `{{{…}}}` is used only for markup the console builds itself (the chart).
struct PageRenderer: Sendable {
    private let library: MustacheLibrary

    /// Every template, by name: the layout and one per page.
    static let templates: [String: String] = [
        "layout": Layout.template,
        "message": MessagePage.template,
        "login": LoginController.template,
        "overview": OverviewPage.template,
        "channels": ChannelsPage.template,
        "channel": ChannelPage.template,
        "activities": ActivitiesPage.template,
        "activity": ActivityPage.template,
        "broadcast-channels": BroadcastChannelsPage.template,
        "pushes": PushesPage.template,
        "push-rows": PushesPage.rowsTemplate,
        "push": PushPage.template,
        "events": EventsPage.template,
        "webhooks": WebhooksPage.template,
        "schedules": SchedulesPage.template,
        "schedule-fields": ScheduleForm.template,
        "compose": ComposePage.template,
        "audience-row": ComposePage.rowTemplate,
        "schema-field": SchemaFields.template,
        "live-activity-types": LiveActivityTypesPage.template,
        "apps": AppsPage.template,
        "app": AppPage.template,
        "audit": AuditPage.template,
        "people": PeoplePage.template,
        "account": AccountPage.template,
    ]

    /// Parses every template; a template that does not parse is a bug in this module, found by any test that starts
    /// the console.
    init() {
        var library = MustacheLibrary()
        for (name, text) in Self.templates {
            do { try library.register(text, named: name) } catch { preconditionFailure("console template \(name): \(error)") }
        }
        self.library = library
    }

    /// The page `template` rendered with `view`, as an HTML response.
    func page<Body: Sendable>(
        _ template: String, title: String, nav: Navigation?, _ body: Body, status: HTTPResponse.Status = .ok
    ) -> Response {
        let html = self.library.render(PageView(title: title, nav: nav, body: body), withTemplate: template) ?? ""
        return Self.html(html, status: status)
    }

    static func html(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// JSON for a page's script, never cached.
    static func json(_ json: RawJSON, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: json.text)))
    }

    /// A redirect after a form (303: the browser follows with GET).
    static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }
}

/// A page with one message: errors, and what there is nothing else to show.
enum MessagePage {
    struct View: Sendable {
        let heading: String
        let message: String
        let signIn: Bool
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <section class="card narrow">
          <h1>{{heading}}</h1>
          <p id="error" role="alert">{{message}}</p>
          {{#signIn}}<p><a href="/console/login">Sign in</a></p>{{/signIn}}
          {{^signIn}}<p><a href="/console">Back to the console</a></p>{{/signIn}}
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}

/// The page every console template extends: header with navigation, then the page's `main` block.
enum Layout {
    static let template = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Blimp</title>
        <link rel="stylesheet" href="/console/static/console.css">
        <script src="/console/static/console.js" defer></script>
        </head>
        <body>
        <header class="top">
          <a class="brand" href="/console">Blimp</a>
          {{#nav}}
          {{#appName}}<span class="app-name" title="App">{{appName}}</span>{{/appName}}
          <nav aria-label="Console">
            {{#base}}
            <a id="nav-overview" href="{{base}}" {{#inOverview}}aria-current="page"{{/inOverview}}>Overview</a>
            <a id="nav-channels" href="{{base}}/channels" {{#inChannels}}aria-current="page"{{/inChannels}}>Channels</a>
            <a id="nav-activities" href="{{base}}/activities" {{#inActivities}}aria-current="page"{{/inActivities}}>Activities</a>
            <a id="nav-pushes" href="{{base}}/pushes" {{#inPushes}}aria-current="page"{{/inPushes}}>Pushes</a>
            <a id="nav-events" href="{{base}}/events" {{#inEvents}}aria-current="page"{{/inEvents}}>Events</a>
            <a id="nav-schedules" href="{{base}}/schedules" {{#inSchedules}}aria-current="page"{{/inSchedules}}>Schedules</a>
            {{#maySend}}<a id="nav-compose" href="{{base}}/compose" {{#inCompose}}aria-current="page"{{/inCompose}}>Compose</a>{{/maySend}}
            {{#mayAdminister}}<a id="nav-people" href="{{base}}/people" {{#inPeople}}aria-current="page"{{/inPeople}}>People</a>
            <a id="nav-webhooks" href="{{base}}/webhooks" {{#inWebhooks}}aria-current="page"{{/inWebhooks}}>Webhooks</a>
            <a id="nav-audit" href="{{base}}/audit" {{#inAudit}}aria-current="page"{{/inAudit}}>Audit</a>{{/mayAdminister}}
            {{/base}}
            {{#isAdmin}}<a id="nav-apps" href="/console/apps" {{#inApps}}aria-current="page"{{/inApps}}>Apps</a>
            {{^base}}<a id="nav-deployment-audit" href="/console/audit" {{#inAudit}}aria-current="page"{{/inAudit}}>Audit</a>{{/base}}{{/isAdmin}}
            {{#accountEmail}}<a id="nav-account" href="/console/account">{{accountEmail}}</a>{{/accountEmail}}
          </nav>
          <form id="logout" method="post" action="/console/logout">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <button type="submit" class="quiet">Sign out</button>
          </form>
          {{/nav}}
        </header>
        <main>
        {{$main}}{{/main}}
        </main>
        </body>
        </html>
        """#
}

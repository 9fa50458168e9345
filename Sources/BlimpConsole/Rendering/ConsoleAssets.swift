import Hummingbird

/// The console's one style sheet and one script, served from the binary: nothing is fetched from elsewhere.
enum ConsoleAssets {
    static func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("static/console.css") { _, _ in Self.response(Self.css, type: "text/css; charset=utf-8") }
        router.get("static/console.js") { _, _ in Self.response(Self.script, type: "text/javascript; charset=utf-8") }
    }

    private static func response(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=300"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static let css = """
        :root { --ink: #1d2330; --muted: #5d6677; --line: #dde2ea; --bg: #f6f7f9; --card: #fff; --accent: #2f5fd0;
          --ok: #2e8b57; --warn: #b7791f; --bad: #c53030; color-scheme: light; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
        a { color: var(--accent); }
        a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible, pre:focus-visible {
          outline: 3px solid #9bb5f0; outline-offset: 1px; }
        .top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.25rem; padding: .6rem 1.25rem; background: var(--card);
          border-bottom: 1px solid var(--line); }
        .brand { font-weight: 700; text-decoration: none; color: var(--ink); letter-spacing: .02em; }
        .app-name { color: var(--muted); }
        nav { display: flex; flex-wrap: wrap; gap: .25rem; flex: 1; }
        nav a { padding: .3rem .6rem; border-radius: 6px; text-decoration: none; color: var(--ink); }
        nav a[aria-current="page"] { background: #e8eefc; color: var(--accent); font-weight: 600; }
        main { max-width: 1100px; margin: 0 auto; padding: 1.25rem; }
        h1 { font-size: 1.5rem; margin: .25rem 0 1rem; word-break: break-word; }
        h2 { font-size: 1.05rem; margin: 0 0 .75rem; }
        h3 { font-size: .95rem; margin: 1rem 0 .5rem; }
        .card, .tile { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1rem 1.25rem; margin-bottom: 1rem; }
        .narrow { max-width: 28rem; margin: 2rem auto; }
        .tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; margin-bottom: 1rem; }
        .tile { margin: 0; }
        .big { font-size: 2rem; font-weight: 600; margin: 0; }
        .muted { color: var(--muted); }
        .mono, pre, code { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: .9em; }
        .scroll { overflow-x: auto; }
        table { width: 100%; border-collapse: collapse; background: var(--card); }
        th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; }
        .num { text-align: right; font-variant-numeric: tabular-nums; }
        dl.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: .5rem 1.5rem; margin: 0; }
        dl.facts dt, dl.states dt { color: var(--muted); font-size: .85rem; }
        dl.facts dd, dl.states dd { margin: 0; word-break: break-all; }
        dl.states { display: grid; grid-template-columns: repeat(3, 1fr); gap: .25rem .75rem; margin: 0; }
        label { display: block; font-weight: 600; font-size: .85rem; margin: .5rem 0 .2rem; }
        input, select, textarea { width: 100%; font: inherit; padding: .45rem .55rem; border: 1px solid #c4cbd6; border-radius: 6px; background: #fff; }
        textarea { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .9em; }
        fieldset { border: 1px dashed var(--line); border-radius: 8px; margin: .75rem 0; padding: .25rem .9rem .75rem; }
        legend { color: var(--muted); font-size: .85rem; }
        label.check { display: inline-flex; align-items: center; gap: .3rem; font-weight: 400; margin-right: .9rem; }
        label.check input { width: auto; }
        form.inline { display: inline-block; margin: 0 .3rem .3rem 0; }
        .row { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: flex-end; }
        .row .field { min-width: 9rem; }
        .row.top { align-items: flex-start; }
        .field.grow { flex: 1; min-width: 12rem; }
        .search { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: flex-end; }
        button, .button { display: inline-block; font: inherit; font-weight: 600; padding: .5rem 1rem; margin-top: .6rem; border-radius: 6px;
          border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; }
        button.secondary { background: #fff; color: var(--accent); }
        button.quiet { background: none; border-color: var(--line); color: var(--ink); margin: 0; padding: .3rem .7rem; }
        button.danger { background: #fff; color: var(--bad); border-color: var(--bad); }
        button.small { padding: .2rem .6rem; margin: 0; font-size: .85rem; }
        .actions { display: flex; gap: .75rem; margin-bottom: 1rem; }
        .alert, .field-error { color: var(--bad); }
        .field-error { margin: .25rem 0 0; font-size: .9rem; }
        .notice { color: var(--ok); }
        .secret { border-color: var(--warn); background: #fffaf0; }
        .tag, .badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; background: #eef1f6; font-size: .85rem; margin: .1rem 0; }
        .state { font-weight: 600; }
        .state-done, .state-active { color: var(--ok); }
        .state-failed, .state-cancelled { color: var(--bad); }
        .state-queued, .state-sending, .state-expired, .state-superseded, .state-stale, .state-awaiting_token, .state-paused { color: var(--warn); }
        .state-ended, .state-dismissed { color: var(--muted); }
        .outcome { display: inline-block; font-size: .85rem; color: var(--bad); margin-right: .4rem; }
        .outcome.ok { color: var(--ok); }
        pre.json { background: #f3f5f8; border-radius: 6px; padding: .75rem; white-space: pre-wrap; word-break: break-all; margin: 0; }
        progress { width: 100%; height: 1.1rem; }
        #sends-chart { width: 100%; height: auto; max-height: 15rem; }
        #sends-chart text { font-size: 11px; fill: var(--muted); }
        #sends-chart .axis { stroke: var(--line); }
        .bar-delivered { fill: var(--ok); background: var(--ok); }
        .bar-refused { fill: var(--warn); background: var(--warn); }
        .bar-failed { fill: var(--bad); background: var(--bad); }
        .key { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; margin: 0 .3rem 0 .8rem; vertical-align: -1px; }
        .legend { font-size: .85rem; color: var(--muted); }
        @media (max-width: 640px) {
          main { padding: .75rem; }
          nav { order: 3; flex: 1 0 100%; flex-wrap: nowrap; overflow-x: auto; }
          nav a { white-space: nowrap; }
          .top { padding: .5rem .75rem; }
          .big { font-size: 1.6rem; }
          dl.states { grid-template-columns: repeat(2, 1fr); }
        }
        """

    /// Moves a push's report while it fans out (until it finishes or the session ends), and reads a chosen `.p8` file
    /// into the form's text field.
    static let script = """
        "use strict";
        (function () {
          const report = document.getElementById("push-report");
          if (report && !report.hasAttribute("data-finished")) {
            const expected = Number(report.dataset.expected) || 1;
            const tick = async () => {
              let push;
              try {
                const response = await fetch(report.dataset.live, { credentials: "same-origin", headers: { Accept: "application/json" } });
                if (response.status === 401) { return; }
                if (!response.ok) { return setTimeout(tick, 3000); }
                push = (await response.json()).push;
              } catch (error) { return setTimeout(tick, 3000); }
              const counts = push.counts || {};
              const failed = Object.values(counts.failed || {}).reduce((sum, n) => sum + n, 0);
              const finished = !["queued", "sending"].includes(push.state);
              const state = document.getElementById("push-state");
              state.textContent = push.state;
              state.className = "state state-" + push.state;
              for (const cell of report.querySelectorAll("[data-count]")) {
                const key = cell.dataset.count;
                const value = key === "failed" ? failed : (counts[key] || 0);
                cell.textContent = value.toLocaleString("en-US");
              }
              const list = document.getElementById("push-failures");
              list.replaceChildren(...Object.keys(counts.failed || {}).sort().map((reason) => {
                const item = document.createElement("li");
                item.textContent = reason + ": " + counts.failed[reason].toLocaleString("en-US");
                return item;
              }));
              const none = document.getElementById("no-failures");
              if (none) { none.hidden = failed > 0; }
              const progress = document.getElementById("push-progress");
              const total = finished ? Math.max(1, counts.targets || 0) : Math.max(expected, counts.targets || 0, 1);
              const handled = finished ? total : (counts.sent || 0) + failed + (counts.superseded || 0);
              progress.max = total;
              progress.value = Math.min(handled, total);
              progress.textContent = handled + " of " + total;
              if (finished) {
                const cancel = document.getElementById("cancel-push");
                if (cancel) { cancel.remove(); }
              } else {
                setTimeout(tick, 1000);
              }
            };
            setTimeout(tick, 500);
          }
          for (const input of document.querySelectorAll("input[type=file][data-fills]")) {
            input.addEventListener("change", async () => {
              const file = input.files && input.files[0];
              if (file) { document.getElementById(input.dataset.fills).value = await file.text(); }
            });
          }
        })();
        """
}

"""Blimp's web console in headless Chromium, driven by Selenium: every page, as a person would use it.

Run by ConsoleBrowserTests (Swift), which starts `blimp apns-sim`, `blimp api` (with an admin token) and `blimp worker`
and seeds two apps through the device API, with:

  CONSOLE_URL        the API's address (http://127.0.0.1:port); the console is under /console
  APP_KEY, MASTER_SECRET, APP_SECRET   the Scores app
  ADMIN_TOKEN        BLIMP_ADMIN_TOKEN
  OTHER_APP_KEY, OTHER_CHANNEL_ID      another app, and one of its channels (never to be shown to Scores)
  TAG_GROUP, TAG     a tag that AUDIENCE_CHANNELS of Scores' channels have, each tracking ACTIVITY_NAME
  CHANNEL_ID         one of them: NAMED_USER's, with a push-to-start token for START_TOKEN_TYPE
  XSS_CHANNEL_ID, XSS_GROUP, XSS_TAG   a channel whose tag is markup, to be shown as text
  P8_FILE            an APNs key the admin pastes into the console to create an app
  SCREENSHOTS        the folder for each page's screenshot
  CHROMIUM, CHROMEDRIVER   Debian's browser and driver (default /usr/bin/chromium, /usr/bin/chromedriver)

Plain asserts with messages naming the page and what was expected; on the first failure it prints the page's address,
title and text, saves a screenshot named failure-*.png and exits non-zero. On success the last line reads
`push <id> done` (the Swift test then checks what the simulator received) and a summary.
"""
import base64
from http.cookiejar import CookieJar
import json
import os
import re
import sys
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

env = os.environ
BASE = env["CONSOLE_URL"].rstrip("/")
APP_KEY, MASTER, APP_SECRET = env["APP_KEY"], env["MASTER_SECRET"], env["APP_SECRET"]
ADMIN_TOKEN = env["ADMIN_TOKEN"]
OTHER_APP_KEY, OTHER_CHANNEL = env["OTHER_APP_KEY"], env["OTHER_CHANNEL_ID"]
GROUP, TAG = env["TAG_GROUP"], env["TAG"]
AUDIENCE = int(env["AUDIENCE_CHANNELS"])
CHANNEL, NAMED_USER = env["CHANNEL_ID"], env["NAMED_USER"]
NAME, START_TYPE = env["ACTIVITY_NAME"], env["START_TOKEN_TYPE"]
XSS_CHANNEL, XSS_GROUP, XSS_TAG = env["XSS_CHANNEL_ID"], env["XSS_GROUP"], env["XSS_TAG"]
P8_FILE = env["P8_FILE"]
SHOTS = env["SCREENSHOTS"]
APP = f"/console/app/{APP_KEY}"
CONTENT_STATE = {"home": 3, "away": 1, "minute": 87}
LAPTOP, PHONE = (1280, 900), (390, 844)
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
SECRET = r"[A-Za-z0-9_-]{22}"

started = time.monotonic()
checks = 0
shots = []


class Failed(Exception):
    pass


def check(condition, message):
    """An assert that names what was expected; counts the checks."""
    global checks
    checks += 1
    if not condition:
        raise Failed(message)


problems = []


def expect(condition, message):
    """A check that lets the walk go on (a page's labels, its script, the browser's log): every failed one is listed
    at the end, and fails the run."""
    global checks
    checks += 1
    if not condition:
        problems.append(message)
        print(f"  PROBLEM: {message}", flush=True)


def step(text):
    print(f"[{time.monotonic() - started:5.1f}s] {text}", flush=True)


# The browser: Debian's Chromium and chromedriver, both named, so Selenium Manager downloads nothing (and may not).
os.environ["SE_OFFLINE"] = "true"
options = webdriver.ChromeOptions()
options.binary_location = env.get("CHROMIUM", "/usr/bin/chromium")
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--lang=en-US",
                 f"--window-size={LAPTOP[0]},{LAPTOP[1]}", "--hide-scrollbars", "--force-color-profile=srgb"]:
    options.add_argument(argument)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service(executable_path=env.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
driver.set_page_load_timeout(30)


def size(width_height, mobile=False):
    """The viewport's size in CSS pixels (a phone's with `mobile`: the viewport meta tag applies)."""
    width, height = width_height
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def shot(name, at=LAPTOP):
    """Saves the viewport as SCREENSHOTS/NN-name.png (at phone width for `at=PHONE`, then back to laptop width)."""
    if at == PHONE:
        size(PHONE, mobile=True)
        time.sleep(0.3)
    if at == PHONE:
        wide = driver.execute_script("return document.documentElement.scrollWidth")
        expect(wide <= PHONE[0], f"{path()} at phone width ({PHONE[0]} px) is {wide} px wide: it scrolls sideways")
    file = os.path.join(SHOTS, f"{len(shots) + 1:02d}-{name}.png")
    driver.save_screenshot(file)
    shots.append(file)
    if at == PHONE:
        size(LAPTOP)


def go(path):
    driver.get(BASE + path)


def wait_for(css, timeout=20, what=None):
    """The first element matching `css`, waiting up to `timeout` seconds."""
    try:
        return WebDriverWait(driver, timeout).until(lambda d: d.find_elements(By.CSS_SELECTOR, css))[0]
    except TimeoutException:
        raise Failed(f"{what or css}: no element matches `{css}` after {timeout} s")


def present(css):
    return driver.find_elements(By.CSS_SELECTOR, css)


def text(css):
    return wait_for(css).text.strip()


def path():
    return urllib.parse.urlsplit(driver.current_url).path


def fill(css, value):
    element = wait_for(css)
    element.clear()
    element.send_keys(value)
    return element


def set_value(css, value):
    """Sets a field's value directly (long or multi-line text, which typing would make slow)."""
    element = wait_for(css)
    driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));", element, value)
    return element


def choose(css, value):
    Select(wait_for(css)).select_by_value(value)


def submit(form_css, value=None):
    """Clicks the form's submit button (the one whose value is `value`, if given) and waits for the next page."""
    form = wait_for(form_css)
    buttons = form.find_elements(By.CSS_SELECTOR, "button[type=submit], button:not([type]), input[type=submit]")
    if value is not None:
        buttons = [b for b in buttons if b.get_attribute("value") == value]
    check(buttons, f"{form_css} on {path()} has no submit button{f' with value {value}' if value else ''}")
    old = driver.find_element(By.TAG_NAME, "html")
    buttons[0].click()
    try:
        WebDriverWait(driver, 30).until(lambda d: old.id != d.find_element(By.TAG_NAME, "html").id)
    except TimeoutException:
        raise Failed(f"submitting {form_css} on {path()} loaded no new page in 30 s")


def page_checks(page):
    """Every page: each visible field has a <label> (by `for` or around it), every label's `for` names a field, every
    link and form stays in the console, ids are unique, no alert is open, and the browser logged no error (CSP
    violations included)."""
    missing = driver.execute_script("""
        const problems = [];
        for (const field of document.querySelectorAll('input, select, textarea')) {
            if (['hidden', 'submit', 'button', 'reset', 'image'].includes(field.type)) continue;
            const byFor = field.id && document.querySelector('label[for="' + CSS.escape(field.id) + '"]');
            if (!byFor && !field.closest('label'))
                problems.push('no <label> for ' + field.tagName.toLowerCase() + '[name=' + field.name + '] id=' +
                              (field.id || '(none)') + ' in form#' + (field.form && field.form.id || '(none)'));
        }
        for (const label of document.querySelectorAll('label[for]'))
            if (!document.getElementById(label.htmlFor)) problems.push('<label for=' + label.htmlFor + '> names no element');
        for (const link of document.querySelectorAll('a[href], form[action]')) {
            const target = new URL(link.getAttribute('href') || link.getAttribute('action'), location.href);
            if (target.origin !== location.origin || !target.pathname.startsWith('/console'))
                problems.push((link.id ? '#' + link.id : link.tagName.toLowerCase() + ' "' + link.textContent.trim().slice(0, 30) + '"') +
                              ' leads out of the console, to ' + target.href);
        }
        const seen = {};
        for (const element of document.querySelectorAll('[id]')) {
            if (seen[element.id]) problems.push('id ' + element.id + ' is used twice');
            seen[element.id] = true;
        }
        return problems;""")
    expect(not missing, f"{page} ({path()}): " + "; ".join(missing))
    try:
        alert = driver.switch_to.alert
        raise Failed(f"{page}: an alert is open: {alert.text!r}")
    except NoAlertPresentException:
        pass
    def expected(message):
        # The 401, 403 and 404 pages the test asks for are logged as failed loads of the page itself.
        return "favicon.ico" in message or (
            "status of 4" in message and urllib.parse.urlsplit(message.split(" ")[0]).path == path())
    errors = [entry["message"] for entry in driver.get_log("browser")
              if entry["level"] == "SEVERE" and not expected(entry["message"])]
    expect(not errors, f"{page} ({path()}): the browser logged errors: {errors}")


def cookie():
    session = driver.get_cookie("blimp_session")
    return f"blimp_session={session['value']}" if session else ""


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def http(method, url, form=None, headers=None, jar=None):
    """One request outside the browser, redirects not followed: (status, body, headers)."""
    handlers = [NoRedirect()] + ([urllib.request.HTTPCookieProcessor(jar)] if jar is not None else [])
    opener = urllib.request.build_opener(*handlers)
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url if url.startswith("http") else BASE + url, data=data, method=method,
                                     headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, response.read().decode(), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), error.headers


def first_int(value):
    match = re.search(r"\d[\d,]*", value)
    return int(match.group(0).replace(",", "")) if match else None


def sign_in_form_outside_browser():
    """A sign-in form fetched without the browser: its cookie jar and CSRF token."""
    jar = CookieJar()
    status, body, _ = http("GET", "/console/login", jar=jar)
    check(status == 200, f"GET /console/login answered {status}")
    token = re.search(r'name="csrf"\s+value="([^"]+)"|value="([^"]+)"\s+name="csrf"', body)
    check(token, "the sign-in page has no hidden csrf field")
    return jar, token.group(1) or token.group(2)


def run():
    # --- Signing in -------------------------------------------------------------------------------------------------
    step("without a session, /console leads to the sign-in page")
    go("/console")
    check(path() == "/console/login", f"/console without a session went to {path()}, not /console/login")
    for form, fields in [("#app-login", ["app_key", "master_secret", "csrf"]), ("#admin-login", ["admin_token", "csrf"])]:
        wait_for(f"form{form}")
        for field in fields:
            check(present(f"form{form} [name={field}]"), f"form{form} has no field {field}")
    check(present("button#account-login-button") and present("button#app-login-button") and present("button#admin-login-button"),
          "the sign-in buttons are missing")
    page_checks("sign-in")
    shot("sign-in")
    status, _, headers = http("GET", f"{APP}/channels")
    check(status == 303 and headers.get("Location", "").endswith("/console/login"),
          f"an app page without a session answered {status} to {headers.get('Location')}, not 303 to /console/login")

    step("a wrong master secret is refused (401, #login-error)")
    fill("form#app-login [name=app_key]", APP_KEY)
    fill("form#app-login [name=master_secret]", "not-the-master-secret")
    submit("form#app-login")
    wait_for("#login-error", what="the page after a wrong master secret")
    check(path() == "/console/login", f"a wrong sign-in landed on {path()}")
    check(not driver.get_cookie("blimp_session"), "a wrong sign-in set a session cookie")
    page_checks("sign-in refused")
    shot("sign-in-refused")
    # Each sign-in form has a token of its own, matched by a cookie it sets: a new form for each attempt.
    attempts = [
        ({"app_key": APP_KEY, "master_secret": APP_SECRET}, True, 401, "login-error", "signing in with the app secret"),
        ({"admin_token": "x" + ADMIN_TOKEN}, True, 401, "login-error", "a wrong admin token"),
        ({"app_key": APP_KEY, "master_secret": MASTER}, None, 403, "error", "a sign-in without its csrf field"),
        ({"app_key": APP_KEY, "master_secret": MASTER}, False, 403, "error", "a sign-in with another form's csrf"),
    ]
    for form, csrf, expected, element, what in attempts:
        jar, token = sign_in_form_outside_browser()
        if csrf is not None:
            form = {**form, "csrf": token if csrf else sign_in_form_outside_browser()[1]}
        status, body, headers = http("POST", "/console/login", form, jar=jar)
        check(status == expected and f'id="{element}"' in body,
              f"{what} answered {status} {headers.get('Location') or ''}, not {expected} with #{element}")

    step("the master secret signs in (typed, then Enter)")
    fill("form#app-login [name=app_key]", APP_KEY)
    fill("form#app-login [name=master_secret]", MASTER).send_keys(Keys.RETURN)
    wait_for("#overview", 15, "the page after signing in")
    check(path() in (APP, APP + "/"), f"signing in landed on {path()}, not {APP}")
    session = driver.get_cookie("blimp_session")
    check(session and session.get("httpOnly") and session.get("sameSite") == "Strict",
          f"the session cookie is not HttpOnly and SameSite=Strict: {session}")

    # --- Overview ---------------------------------------------------------------------------------------------------
    step("overview")
    for css in ["#overview", "#channel-count", "#queue-depth", "svg#sends-chart"]:
        wait_for(css, what="the overview")
    check(first_int(text("#channel-count")) is not None, f"#channel-count shows no number: {text('#channel-count')!r}")
    check(first_int(text("#queue-depth")) is not None, f"#queue-depth shows no number: {text('#queue-depth')!r}")
    page_checks("overview")
    shot("overview-before")

    # --- Channels -----------------------------------------------------------------------------------------------------
    step(f"channels: search by tag {GROUP}:{TAG}")
    go(f"{APP}/channels")
    wait_for("form#channel-search")
    page_checks("channel search")
    choose("form#channel-search [name=by]", "tag")
    fill("form#channel-search [name=group]", GROUP)
    fill("form#channel-search [name=q]", TAG)
    submit("form#channel-search")
    wait_for("table#channel-results", what=f"the search for {GROUP}:{TAG}")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(driver.current_url).query)
    check(query.get("by") == ["tag"] and query.get("group") == [GROUP] and query.get("q") == [TAG],
          f"the search form's query is {query}, not by=tag, group={GROUP}, q={TAG}")
    links = present("table#channel-results a.channel-link")
    hrefs = [link.get_attribute("href") for link in links]
    check(len(links) == AUDIENCE, f"the search for {GROUP}:{TAG} found {len(links)} channels, not {AUDIENCE}: {hrefs}")
    check(not any(OTHER_CHANNEL in href for href in hrefs), "the search found another app's channel")
    check(all(re.search(f"{APP}/channels/{UUID}$", href) for href in hrefs), f"channel links are not {APP}/channels/{{id}}: {hrefs}")
    page_checks("channel results")
    shot("channels-by-tag")
    mine = [link for link in links if link.get_attribute("href").endswith(CHANNEL)]
    check(mine, f"the search results do not link to channel {CHANNEL}")
    mine[0].click()

    step("the channel's page: tags, named user, Live Activity, push-to-start token")
    wait_for("#channel", what=f"channel {CHANNEL}'s page")
    check(path() == f"{APP}/channels/{CHANNEL}", f"the channel link went to {path()}")
    tags = text("table#channel-tags")
    check(GROUP in tags and TAG in tags, f"table#channel-tags does not show {GROUP}: {TAG}: {tags!r}")
    activities = text("table#live-activities")
    check(NAME in activities, f"table#live-activities does not show {NAME!r}: {activities!r}")
    check(START_TYPE in text("table#push-to-start"), f"table#push-to-start does not show {START_TYPE}")
    check(NAMED_USER in text("#channel"), f"#channel does not show the named user {NAMED_USER}")
    page_checks("channel")
    shot("channel")

    step("search by named user and by channel id; another app's channel is not found")
    go(f"{APP}/channels?" + urllib.parse.urlencode({"by": "named_user", "group": "", "q": NAMED_USER}))
    hrefs = [link.get_attribute("href") for link in present("table#channel-results a.channel-link")]
    check(len(hrefs) == 1 and hrefs[0].endswith(CHANNEL), f"the named user {NAMED_USER}'s channels are {hrefs}, not [{CHANNEL}]")
    go(f"{APP}/channels?" + urllib.parse.urlencode({"by": "channel", "group": "", "q": OTHER_CHANNEL}))
    check(not present("a.channel-link"), "a search by another app's channel id found it")
    go(f"{APP}/channels/{OTHER_CHANNEL}")
    wait_for("#error", what="another app's channel id")
    check(OTHER_CHANNEL not in driver.find_element(By.TAG_NAME, "main").text, "the 404 page names the other app's channel")
    page_checks("another app's channel")
    shot("channel-of-another-app")
    for url in [f"{APP}/channels/{OTHER_CHANNEL}", f"/console/app/{OTHER_APP_KEY}", f"/console/app/{OTHER_APP_KEY}/channels/{OTHER_CHANNEL}",
                f"{APP}/channels/00000000-0000-0000-0000-000000000000", "/console/apps"]:
        status, body, _ = http("GET", url, headers={"Cookie": cookie()})
        check(status == 404 and 'id="error"' in body, f"GET {url} with Scores' session answered {status}, not 404 with #error")

    step("a tag that is markup shows as text")
    go(f"{APP}/channels/{XSS_CHANNEL}")
    tags = text("table#channel-tags")
    check(XSS_TAG in tags, f"table#channel-tags does not show {XSS_TAG!r} as text: {tags!r}")
    check(XSS_GROUP in tags, f"table#channel-tags does not show the group {XSS_GROUP}")
    injected = driver.execute_script("return [...document.querySelectorAll('script')].filter(s => s.textContent.includes('alert(1)')).length")
    check(injected == 0, "the tag became a <script> element")
    check("&lt;script&gt;" in driver.page_source or "&lt;script>" in driver.page_source, "the page's HTML does not escape the tag's <")
    page_checks("channel with markup in a tag")
    shot("channel-markup-tag")

    # --- Compose ------------------------------------------------------------------------------------------------------
    step("compose: a content state that is not JSON is a field error")
    go(f"{APP}/compose")
    form = wait_for("form#compose")
    for field in ["event", "name", "content_state", "alert_title", "alert_body", "attributes_type", "attributes", "priority",
                  "stale_date", "dismissal_date", "relevance_score", "match", "csrf"] \
            + [f"aud_{part}_{i}" for i in range(5) for part in ("kind", "group", "value")] \
            + [f"not_{part}_{j}" for j in range(3) for part in ("kind", "group", "value")]:
        check(form.find_elements(By.NAME, field), f"form#compose has no field {field}")
    check(present("#preview-button") and present("#send-button"), "form#compose lacks #preview-button or #send-button")
    page_checks("compose")
    shot("compose")
    shot("compose-phone", at=PHONE)

    def compose(content_state):
        choose("form#compose [name=event]", "update")
        fill("form#compose [name=name]", NAME)
        set_value("form#compose [name=content_state]", content_state)
        choose("form#compose [name=aud_kind_0]", "tag")
        fill("form#compose [name=aud_group_0]", GROUP)
        fill("form#compose [name=aud_value_0]", TAG)

    compose('{"home": 3,')
    submit("form#compose", "preview")
    error = wait_for(".field-error#error-content_state", what="the preview of a content state that is not JSON")
    check(error.text.strip(), "#error-content_state is empty")
    check(not present("pre#apns-payload"), "a content state that is not JSON was previewed")
    page_checks("compose with a field error")
    shot("compose-field-error")

    step("compose: preview an update by name to a tag")
    go(f"{APP}/compose")
    compose(json.dumps(CONTENT_STATE))
    submit("form#compose", "preview")
    wait_for("#preview", what="the preview")
    payload_text = text("pre#apns-payload")
    try:
        payload = json.loads(payload_text)
        check(payload.get("aps", {}).get("content-state") == CONTENT_STATE,
              f"pre#apns-payload's aps.content-state is not {CONTENT_STATE}: {payload_text}")
        check(payload["aps"].get("event") == "update", f"pre#apns-payload's aps.event is not update: {payload_text}")
    except ValueError:
        raise Failed(f"pre#apns-payload is not JSON: {payload_text!r}")
    check(first_int(text("#payload-size")) is not None, f"#payload-size shows no number: {text('#payload-size')!r}")
    count = first_int(text("#audience-count"))
    check(count == AUDIENCE, f"#audience-count says {text('#audience-count')!r}, not {AUDIENCE} (the channels tagged {GROUP}:{TAG})")
    kept = {field: driver.find_element(By.CSS_SELECTOR, f"form#compose [name={field}]").get_attribute("value")
            for field in ["name", "aud_group_0", "aud_value_0"]}
    check(kept == {"name": NAME, "aud_group_0": GROUP, "aud_value_0": TAG}, f"the preview did not keep the form's values: {kept}")
    page_checks("compose preview")
    shot("compose-preview")
    shot("compose-preview-phone", at=PHONE)

    step("compose: a send without the csrf field is refused (403), in the browser and outside it")
    fields = {"event": "update", "name": NAME, "content_state": json.dumps(CONTENT_STATE), "priority": "10", "match": "all",
              "aud_kind_0": "tag", "aud_group_0": GROUP, "aud_value_0": TAG, "action": "send"}
    status, body, _ = http("POST", f"{APP}/compose", fields, headers={"Cookie": cookie()})
    check(status == 403 and 'id="error"' in body, f"a compose POST without csrf answered {status}, not 403 with #error")
    csrf = driver.find_element(By.CSS_SELECTOR, "form#compose [name=csrf]").get_attribute("value")
    status, body, _ = http("POST", f"{APP}/compose", {**fields, "csrf": csrf[:-1] + ("0" if csrf[-1] != "0" else "1")},
                           headers={"Cookie": cookie()})
    check(status == 403 and 'id="error"' in body, f"a compose POST with a wrong csrf answered {status}, not 403 with #error")
    driver.execute_script("document.querySelectorAll('form#compose [name=csrf]').forEach(e => e.remove())")
    submit("form#compose", "send")
    wait_for("#error", what="a send whose csrf field was removed")
    check("/pushes/" not in path(), "a send without csrf went to a push page")
    page_checks("send without csrf")
    shot("compose-without-csrf")

    step("compose: send, and watch the report reach done")
    go(f"{APP}/compose")
    compose(json.dumps(CONTENT_STATE))
    submit("form#compose", "preview")
    wait_for("#preview")
    submit("form#compose", "send")
    match = re.fullmatch(f"{APP}/pushes/({UUID})", path())
    check(match, f"sending landed on {path()}, not {APP}/pushes/{{id}}")
    push_id = match.group(1)
    for css in ["#push-state", "progress#push-progress", "#push-counts"]:
        wait_for(css, what=f"push {push_id}'s page")
    states = [text("#push-state")]
    shot("push-sending")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and text("#push-state") != "done":
        check(text("#push-state") in ("queued", "sending", "done"), f"push {push_id} is {text('#push-state')!r}")
        if states[-1] != text("#push-state"):
            states.append(text("#push-state"))
        time.sleep(0.25)
    if text("#push-state") != "done":
        errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        driver.refresh()
        after = text("#push-state")
        if after != "done":
            raise Failed(f"push {push_id} read {states} on its page for 60 s, and {after} after a reload: it never got done")
        expect(False, f"#push-state of push {push_id} read {states} for 60 s, though the push was done (a reload shows it): "
                      f"the page's script did not update it; the browser logged {errors}")
        states.append("(reload)")
    step(f"push {push_id} went {' -> '.join(states + ['done'])} on the page")
    counts = text("#push-counts")
    check(str(AUDIENCE) in counts, f"#push-counts does not show {AUDIENCE} sends: {counts!r}")
    progress = wait_for("progress#push-progress")
    value, maximum = progress.get_attribute("value"), progress.get_attribute("max")
    check(value and maximum and float(value) == float(maximum), f"progress#push-progress is {value}/{maximum} at done")
    page_checks("push report")
    shot("push-done")
    status, body, _ = http("GET", f"{APP}/pushes/{push_id}/live", headers={"Cookie": cookie()})
    live = json.loads(body) if status == 200 else {}
    check((live.get("push") or live).get("state") == "done", f"GET /pushes/{push_id}/live answered {status}: {body[:300]}")

    # --- Activities and pushes ----------------------------------------------------------------------------------------
    step("activities: the name, and its page listing the push")
    go(f"{APP}/activities")
    wait_for("table#activity-names")
    links = [link for link in present("table#activity-names a.activity-link") if link.text.strip() == NAME]
    check(links, f"table#activity-names has no a.activity-link for {NAME!r}: {text('table#activity-names')!r}")
    href = links[0].get_attribute("href")
    check(href.endswith(f"{APP}/activities/" + urllib.parse.quote(NAME, safe="")),
          f"the link for {NAME!r} is {href}, not the percent-encoded name")
    page_checks("activities")
    shot("activities")
    links[0].click()
    listed = wait_for("table#activity-pushes", what=f"{NAME!r}'s page")
    check(present(f"table#activity-pushes a[href$='/pushes/{push_id}']") or push_id in listed.text,
          f"table#activity-pushes does not list push {push_id}: {listed.text!r}")
    page_checks("activity name")
    shot("activity")

    step("pushes: the list links to the push")
    go(f"{APP}/pushes")
    wait_for("table#push-list")
    links = present("table#push-list a.push-link")
    check(len(links) == 1, f"table#push-list has {len(links)} pushes, not the 1 sent (the refused sends must not be there)")
    check(links[0].get_attribute("href").endswith(f"{APP}/pushes/{push_id}"), f"the push link is {links[0].get_attribute('href')}")
    page_checks("pushes")
    shot("pushes")
    links[0].click()
    check(text("#push-state") == "done", f"push {push_id}'s page reads {text('#push-state')!r} after the list's link")

    step("schedules: schedule the update daily from tomorrow in each device's local time, pause it, cancel it")
    go(f"{APP}/compose")
    compose(json.dumps(CONTENT_STATE))
    choose("form#compose [name=schedule_clock]", "local")
    set_value("form#compose [name=scheduled_time]", time.strftime("%Y-%m-%dT%H:%M", time.gmtime(time.time() + 86400)))
    choose("form#compose [name=repeat]", "daily")
    fill("form#compose [name=schedule_name]", "nightly")
    submit("form#compose", "schedule")
    check(path() == f"{APP}/schedules", f"scheduling landed on {path()}, not {APP}/schedules: {text('main')[:300]!r}")
    listed = text("table#schedule-list")
    check("nightly" in listed and "every day" in listed, f"table#schedule-list does not show the daily schedule: {listed!r}")
    page_checks("schedules")
    shot("schedules")
    shot("schedules-phone", at=PHONE)
    submit("table#schedule-list form.pause-schedule")
    check("paused" in text("table#schedule-list"), f"the paused schedule does not read paused: {text('table#schedule-list')!r}")
    submit("table#schedule-list form.cancel-schedule")
    check(not present("table#schedule-list"), "the cancelled schedule is still listed")

    step("live activity types: a type seen without a schema, declared, then compose fills its fields")
    go(f"{APP}/activities")
    wait_for("#live-activity-types-link").click()
    seen = text("#seen-without-schema")
    check(START_TYPE in seen, f"#seen-without-schema does not list {START_TYPE}: {seen!r}")
    schemas = {
        "attributes": {"type": "object", "properties": {"venue": {"type": "string", "maxLength": 30}}, "required": ["venue"]},
        "content_state": {"type": "object", "required": ["status", "home", "kickoff"], "properties": {
            "status": {"type": "string", "enum": ["scheduled", "live", "final"], "title": "Status"},
            "home": {"type": "integer", "minimum": 0, "maximum": 99, "title": "Home goals"},
            "kickoff": {"type": "integer", "format": "date", "title": "Kick-off"}}},
    }
    declare = urllib.request.Request(
        f"{BASE}/api/live_activity_types/{urllib.parse.quote(START_TYPE)}", data=json.dumps(schemas).encode(), method="PUT",
        headers={"Content-Type": "application/json", "Accept": "application/vnd.urbanairship+json; version=3;",
                 "Authorization": "Basic " + base64.b64encode(f"{APP_KEY}:{MASTER}".encode()).decode()})
    with urllib.request.urlopen(declare, timeout=30) as response:
        check(response.status == 201, f"PUT /api/live_activity_types/{START_TYPE} answered {response.status}, not 201")
    driver.refresh()
    listed = text("#live-activity-types")
    check(START_TYPE in listed and '"enum"' in listed, f"#live-activity-types does not show {START_TYPE}'s schemas: {listed[:300]!r}")
    page_checks("live activity types")
    shot("live-activity-types")
    go(f"{APP}/compose")
    choose("form#compose [name=event]", "start")
    fill("form#compose [name=name]", "typed-final")
    fill("form#compose [name=attributes_type]", START_TYPE)
    submit("form#compose", "fields")
    choose("form#compose select[id='content_state.status']", "live")
    fill("form#compose input[id='content_state.home']", "2")
    kickoff = time.time() + 3600
    set_value("form#compose input[id='content_state.kickoff']", time.strftime("%Y-%m-%dT%H:%M", time.gmtime(kickoff)))
    fill("form#compose input[id='attributes.venue']", "Wembley")
    fill("form#compose [name=alert_title]", "Kick-off")
    page_checks("compose with a type's fields")
    shot("compose-typed-fields")
    submit("form#compose", "preview")
    payload = text("#apns-payload")
    since_2001 = int(kickoff // 60 * 60) - 978307200
    expected = f'"content-state":{{"status":"live","home":2,"kickoff":{since_2001}}}'
    check(expected in payload and '"venue":"Wembley"' in payload, f"#apns-payload lacks {expected} and the venue: {payload!r}")
    home = fill("form#compose input[id='content_state.home']", "100")
    check(driver.execute_script("return arguments[0].validity.rangeOverflow", home), "the browser takes 100 for a score of at most 99")
    fill("form#compose input[id='content_state.home']", "2")
    set_value("form#compose input[id='content_state.kickoff']", time.strftime("%Y-%m-%dT%H:%M", time.gmtime(kickoff + 10 * 365 * 86400)))
    submit("form#compose", "preview")
    error = wait_for("#error-content_state\\.kickoff", what="compose refusing a kick-off ten years ahead").text
    check("expected a date between" in error, f"#error-content_state.kickoff reads {error!r}")
    page_checks("compose refused by the type")
    shot("compose-typed-refused")

    step("overview after the push")
    go(APP)
    wait_for("svg#sends-chart")
    page_checks("overview")
    shot("overview")
    shot("overview-phone", at=PHONE)

    step("signing out ends the session")
    old = cookie()
    submit("form#logout")
    check(path() == "/console/login", f"signing out landed on {path()}")
    status, _, headers = http("GET", APP, headers={"Cookie": old})
    check(status == 303 and headers.get("Location", "").endswith("/console/login"),
          f"the signed-out session's cookie still opens {APP}: {status} {headers.get('Location')}")

    # --- Admin --------------------------------------------------------------------------------------------------------
    step("admin: sign in with the admin token")
    go("/console/login")
    fill("form#admin-login [name=admin_token]", ADMIN_TOKEN)
    submit("form#admin-login")
    wait_for("table#app-list", what="the page after the admin's sign-in")
    check(path() == "/console/apps", f"the admin's sign-in landed on {path()}, not /console/apps")
    names = text("table#app-list")
    check("Scores" in names and "Other" in names, f"table#app-list does not list Scores and Other: {names!r}")
    check(len(present("table#app-list a.app-link")) == 2, "table#app-list does not link each app")
    page_checks("apps")
    shot("apps")

    step("admin: the .p8 file input fills the key's text; create an app from a pasted key")
    with open(P8_FILE) as file:
        p8 = file.read()
    wait_for("input#p8-file").send_keys(P8_FILE)
    try:
        WebDriverWait(driver, 5).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "form#create-app textarea[name=p8]").get_attribute("value").strip() == p8.strip())
    except TimeoutException:
        raise Failed("choosing a .p8 in input#p8-file did not fill form#create-app's p8 textarea")
    fill("form#create-app [name=name]", "Console Made")
    fill("form#create-app [name=bundle_id]", "com.example.console")
    fill("form#create-app [name=key_id]", "NEWKEY0001")
    fill("form#create-app [name=team_id]", "DEF123GHIJ")
    choose("form#create-app [name=environment]", "sandbox")
    textarea = wait_for("form#create-app textarea[name=p8]")
    textarea.clear()
    textarea.send_keys(p8)  # pasted: typed as is, line breaks included
    page_checks("apps, create form filled")
    submit("form#create-app")
    credentials = wait_for("#new-credentials", what="the page after creating an app").text
    secrets = re.findall(SECRET, credentials)
    check(len(set(secrets)) >= 3, f"#new-credentials does not show an app key and two secrets: {credentials!r}")
    page_checks("new app's credentials")
    shot("app-created")
    new = [link for link in present("table#app-list a.app-link") if "Console Made" in link.text]
    if not new:  # the credentials page may not list apps: the list is one page away
        go("/console/apps")
        new = [link for link in present("table#app-list a.app-link") if "Console Made" in link.text]
    check(new, "table#app-list does not link the new app")
    new_key = new[0].get_attribute("href").rstrip("/").rsplit("/", 1)[-1]
    check(new_key in secrets, f"#new-credentials does not show the new app's key {new_key}")
    master = [s for s in secrets if s != new_key
              and http("GET", "/api/channels", headers={"Accept": "application/vnd.urbanairship+json; version=3",
                       "Authorization": "Basic " + base64.b64encode(f"{new_key}:{s}".encode()).decode()})[0] == 200]
    check(len(master) == 1, "none of the secrets #new-credentials showed is the new app's master secret (GET /api/channels)")
    go("/console/apps")
    check(not present("#new-credentials"), "the new app's credentials are shown a second time")
    check(not any(secret in driver.page_source for secret in secrets if secret != new_key), "a secret is on the apps page again")

    step("admin: the app's page issues an API token, shown once")
    new = [link for link in present("table#app-list a.app-link") if "Console Made" in link.text]
    new[0].click()
    wait_for("form#create-token", what=f"/console/apps/{new_key}")
    check(path() == f"/console/apps/{new_key}", f"the app link went to {path()}")
    for css in ["form#replace-key", "form#rotate-master", "form#rotate-app-secret", "form#create-token"]:
        check(present(css), f"/console/apps/{new_key} has no {css}")
    check(present("form#rotate-app-secret [name=overlap_hours]"), "form#rotate-app-secret has no overlap_hours field")
    page_checks("app")
    shot("app")
    fill("form#create-token [name=token_name]", "console-ci")
    submit("form#create-token")
    issued = wait_for("#new-secret", what="the page after issuing a token").text
    token = re.search(r"blimp_[A-Za-z0-9_-]+", issued)
    check(token, f"#new-secret shows no blimp_ token: {issued!r}")
    status, body, _ = http("GET", "/api/pushes", headers={"Accept": "application/vnd.urbanairship+json; version=3",
                                                          "Authorization": f"Bearer {token.group(0)}", "X-UA-Appkey": new_key})
    check(status == 200, f"the issued token is refused by GET /api/pushes: {status} {body[:200]}")
    check(present("form.revoke-token"), "the issued token has no form.revoke-token")
    page_checks("app with a new token")
    shot("app-token")
    go(f"/console/apps/{new_key}")
    check(token.group(0) not in driver.page_source, "the API token is shown a second time")

    step("admin: any app's pages open")
    go(APP)
    wait_for("#overview", what=f"{APP} as admin")
    go(f"/console/app/{OTHER_APP_KEY}/channels/{OTHER_CHANNEL}")
    wait_for("#channel", what="the other app's channel as admin")
    accounts(push_id)
    print(f"push {push_id} done")


def sign_in_as(email, password):
    fill("form#account-login [name=email]", email)
    fill("form#account-login [name=password]", password)
    submit("form#account-login")
    wait_for("#overview", 15, f"the page after {email} signed in")
    check(path() in (APP, APP + "/"), f"{email} landed on {path()}, not {APP}")


def sign_out():
    submit("form#logout")
    wait_for("form#account-login", what="the sign-in page after signing out")


def accounts(push_id):
    """People with accounts: a viewer sees but cannot send, a sender sends, and a removed person's open session is
    refused at its next click."""
    step("admin: the People page adds a viewer and a sender, each password shown once")
    go(f"{APP}/people")
    wait_for("form#add-person", what=f"{APP}/people")
    page_checks("people")
    passwords = {}
    for email, role in [("viewer@example.com", "viewer"), ("sender@example.com", "sender")]:
        fill("form#add-person [name=email]", email)
        choose("form#add-person [name=role]", role)
        submit("form#add-person")
        passwords[email] = wait_for("#new-secret-value", what=f"the page after adding {email}").text.strip()
        check(len(passwords[email]) >= 12, f"the password shown for {email} is {passwords[email]!r}")
    go(f"{APP}/people")
    people = text("table#people")
    check("viewer@example.com" in people and "sender@example.com" in people, f"table#people lacks the new people: {people!r}")
    check(not any(p in driver.page_source for p in passwords.values()), "a password is on the People page again")
    shot("people")
    sign_out()

    step("a sender composes and sends (to a tag no phone has)")
    sign_in_as("sender@example.com", passwords["sender@example.com"])
    check(present("#nav-compose") and not present("#nav-people"), "a sender's header should offer Compose and not People")
    go(f"{APP}/compose")
    wait_for("form#compose", what="compose as a sender")
    choose("form#compose [name=event]", "update")
    fill("form#compose [name=name]", NAME)
    set_value("form#compose [name=content_state]", json.dumps(CONTENT_STATE))
    choose("form#compose [name=aud_kind_0]", "tag")
    fill("form#compose [name=aud_group_0]", GROUP)
    fill("form#compose [name=aud_value_0]", "nobody-has-this-tag")
    submit("form#compose", "send")
    check(re.fullmatch(f"{APP}/pushes/{UUID}", path()), f"the sender's send landed on {path()}, not a push page")
    sign_out()

    step("a viewer sees every page but no compose, cancel or people")
    sign_in_as("viewer@example.com", passwords["viewer@example.com"])
    check(not present("#nav-compose") and not present("#nav-people"), "a viewer's header offers Compose or People")
    check("viewer@example.com" in text("#nav-account"), "the header does not name the viewer")
    go(f"{APP}/pushes/{push_id}")
    wait_for("#push-state", what="a push's page as a viewer")
    check(not present("form#cancel-push"), "a viewer is offered form#cancel-push")
    go(f"{APP}/schedules")
    check(not present("form.cancel-schedule"), "a viewer is offered form.cancel-schedule")
    status, body, _ = http("GET", f"{APP}/compose", headers={"Cookie": cookie()})
    check(status == 403 and "sender role" in body, f"compose as a viewer answered {status}, not 403 naming the sender role")
    go(f"{APP}/compose")
    wait_for("#error", what="compose as a viewer")
    page_checks("compose refused to a viewer")
    shot("viewer-compose-refused")
    go(f"{APP}/channels")
    wait_for("form#channel-search", what="channels as a viewer")

    step("the admin removes the viewer; the viewer's open session is refused at its next click")
    jar, token = sign_in_form_outside_browser()
    status, _, _ = http("POST", "/console/login", {"csrf": token, "admin_token": ADMIN_TOKEN}, jar=jar)
    check(status == 303, f"the admin's sign-in outside the browser answered {status}")
    status, body, _ = http("GET", f"{APP}/people", jar=jar)
    csrf = re.search(r'name="csrf" value="([^"]+)"', body)
    check(status == 200 and csrf, f"{APP}/people as the admin answered {status}")
    status, body, _ = http("POST", f"{APP}/people/remove", {"csrf": csrf.group(1), "email": "viewer@example.com"}, jar=jar)
    check(status == 200 and "removed" in body, f"removing the viewer answered {status}")
    wait_for("#nav-overview").click()
    WebDriverWait(driver, 15).until(lambda d: path() == "/console/login")
    check(not driver.get_cookie("blimp_session") or cookie() == "" or path() == "/console/login",
          "the removed viewer's click did not lead to the sign-in page")


try:
    run()
    if problems:
        raise Failed(f"{len(problems)} problems:\n  " + "\n  ".join(problems))
except Exception as error:
    message = str(error) if isinstance(error, Failed) else traceback.format_exc()
    print(f"FAILED: {message}", file=sys.stderr)
    try:
        print(f"  at {driver.current_url} (title {driver.title!r})", file=sys.stderr)
        body = driver.find_element(By.TAG_NAME, "body").text
        print("  page text: " + body[:1500].replace("\n", "\n    "), file=sys.stderr)
        for entry in driver.get_log("browser"):
            print(f"  browser {entry['level']}: {entry['message'][:500]}", file=sys.stderr)
        path_ = os.path.join(SHOTS, f"failure-{len(shots) + 1:02d}.png")
        driver.save_screenshot(path_)
        print(f"  screenshot: {path_}", file=sys.stderr)
    except Exception as inner:  # the browser itself may be gone
        print(f"  (no page: {inner})", file=sys.stderr)
    sys.exit(1)
finally:
    driver.quit()
print(f"console_browser: {checks} checks passed, {len(shots)} screenshots in {SHOTS}, {time.monotonic() - started:.0f} s")

#!/usr/bin/python3
"""The feed page (`serve`'s `/`) in a real browser: Debian's Chromium, headless, driven by Selenium,
against a live `preview-loop serve` on 127.0.0.1. Scripts/feed-check.sh installs what it needs and
runs this under a timeout; every process started here is stopped on the way out.

Each check compares the page with an outside oracle: the card's reveal with `preview-loop card --at`,
the storyboard tile with the server's own WebVTT index, the capture with `preview-loop thumb --at`
(PSNR by the ffmpeg CLI), the bytes with the browser's performance entries, the reduced-motion still
with ffprobe's frame count of the body the browser got. Waits are polls with
generous limits (renders on a loaded machine take seconds); times are the ones the page reports.
"""
import argparse
import base64
import functools
import http.server
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

RENDER_WAIT = 180          # seconds a first render may take on a loaded machine
failures = []
processes = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)
    return condition


def run(arguments, **kwargs):
    return subprocess.run(arguments, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300, **kwargs)


def wait_for(what, condition, limit=RENDER_WAIT, every=0.05):
    deadline = time.monotonic() + limit
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError("timed out waiting for " + what)
        time.sleep(every)


def make_clips(root):
    """reveal.mp4: 2 s of black, then orange with grain (its poster, the first good frame, is orange; its
    first two seconds of video are black, so the reveal's disc is dark on a bright poster).
    motion.mp4: 8 s of ffmpeg's testsrc2 (a moving picture for capture, hover and scrubbing)."""
    encode = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "25", "-an"]
    run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=black:s=640x360:r=25:d=2",
         "-f", "lavfi", "-i", "color=c=0xE08030:s=640x360:r=25:d=6",
         "-filter_complex", "[1]noise=alls=12:allf=t[b];[0][b]concat=n=2:v=1", *encode, root + "/reveal.mp4"])
    run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=8", *encode, root + "/motion.mp4"])


def start_server(binary, root, extra=()):
    process = subprocess.Popen([binary, "serve", "--root", root, "--listen", "127.0.0.1:0", "--json", "--workers", "2",
                                "--access-log", "/dev/null", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    processes.append(process)
    line = process.stdout.readline().decode()
    port = json.loads(line)["port"]
    return "http://127.0.0.1:%d" % port


def browser(downloads, network_log=False, extra=()):
    """Headless Chromium with its own profile; with `network_log`, its DevTools Network events are kept for
    `driver.get_log("performance")` (the headers a request really carried, where its answer came from)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--mute-audio",
                     "--window-size=1280,900", "--force-device-scale-factor=1", "--hide-scrollbars",
                     "--no-first-run", "--disable-extensions", "--user-data-dir=" + downloads + "-profile", *extra]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", **({"performance": "ALL"} if network_log else {})})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    processes.append(driver)
    driver.set_script_timeout(60)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    return driver


def rgb(png, work):
    """The pixels of a PNG as rows of (r, g, b), decoded by the ffmpeg CLI."""
    path = os.path.join(work, "shot-%d.png" % time.monotonic_ns())
    with open(path, "wb") as file:
        file.write(png)
    return decode(path)


def decode(path):
    probe = json.loads(run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                            "-of", "json", path]).stdout)["streams"][0]
    width, height = probe["width"], probe["height"]
    raw = run(["ffmpeg", "-v", "error", "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]).stdout
    return width, height, raw


def luma(raw, index):
    return 0.299 * raw[index] + 0.587 * raw[index + 1] + 0.114 * raw[index + 2]


def button_mask(width, height):
    """Pixels left out of disc counts: the play disc (centre; the engine's is 108 px across at 480 wide), the
    capture disc (bottom centre) and the close disc (top right), which the page and the engine draw differently."""
    discs = [(width / 2, height / 2, 56), (width / 2, height - 36, 28), (width - 30, 30, 22)]
    return lambda x, y: any((x - cx) ** 2 + (y - cy) ** 2 <= r * r for cx, cy, r in discs)


def inside_card(width, height, x, y, radius=22, inset=2):
    """Whether (x, y) is inside the card's rounded rectangle, `inset` pixels in."""
    left, top, right, bottom = inset + radius, inset + radius, width - inset - radius, height - inset - radius
    if x < inset or y < inset or x >= width - inset or y >= height - inset:
        return False
    cx = min(max(x, left), right)
    cy = min(max(y, top), bottom)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius * radius


def dark_pixels(image, excluded, threshold=40):
    width, height, raw = image
    count = 0
    for y in range(height):
        for x in range(width):
            if not excluded(x, y) and luma(raw, (y * width + x) * 3) < threshold:
                count += 1
    return count


def ease_in_out(x):
    """CSS's cubic-bezier(0.42, 0, 0.58, 1) by bisection, as the card's Easing does."""
    def bezier(t, p1, p2):
        u = 1 - t
        return 3 * u * u * t * p1 + 3 * u * t * t * p2 + t * t * t
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if bezier(middle, 0.42, 0.58) < x:
            low = middle
        else:
            high = middle
    return bezier((low + high) / 2, 0.0, 1.0)


def card_named(driver, name):
    return driver.find_element(By.CSS_SELECTOR, '.pl-card[data-name="%s"]' % name)


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def wait_posters(driver, within_view_only=False):
    script = """
    const all = [...document.querySelectorAll('img.pl-poster')];
    const shown = arguments[0] ? all.filter(img => { const r = img.getBoundingClientRect();
        return r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth; }) : all;
    return shown.length > 0 && shown.every(img => img.complete && img.naturalWidth > 0) ? shown.length : 0;
    """
    return wait_for("the posters", lambda: driver.execute_script(script, within_view_only))


def open_card(driver, card):
    card.find_element(By.CSS_SELECTOR, ".pl-play").click()
    wait_for("the card to open", lambda: card.get_attribute("data-state") == "playing", limit=10)


def close_card(driver, card):
    if card.get_attribute("data-state") == "playing":
        card.find_element(By.CSS_SELECTOR, ".pl-close").click()
    wait_for("the card to close", lambda: card.get_attribute("data-state") == "poster", limit=10)


def check_reveal(driver, binary, root, work):
    card = card_named(driver, "reveal")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", card)
    size = driver.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]", card)
    width, height = int(round(size[0])), int(round(size[1]))
    check((width, height) == (480, 270), "the card is 480x270 CSS pixels at 16:9 (%dx%d)" % (width, height))
    open_card(driver, card)
    # Freeze the reveal at 300 ms on its own clock, and the video (if it has arrived) in its black start.
    frozen = driver.execute_script("""
        const card = arguments[0], stage = card.querySelector('.pl-stage');
        const animation = stage.getAnimations().find(a => a.animationName === 'pl-reveal');
        if (!animation) return null;
        animation.pause(); animation.currentTime = 300;
        const video = card.querySelector('video'); if (video) { video.pause(); video.currentTime = 0.5; }
        return animation.currentTime;""", card)
    check(frozen == 300, "the reveal is a CSS animation named pl-reveal (frozen at %s ms)" % frozen)
    reported = wait_for("data-reveal-ms", lambda: card.get_attribute("data-reveal-ms") == "300" and "300", limit=10)
    time.sleep(0.2)   # a frame or two for a seek of the video, if it has arrived (the disc is dark either way)
    shot = rgb(card.screenshot_as_png, work)
    seconds = int(reported) / 1000
    engine_path = os.path.join(work, "engine.png")
    # The engine's card plays from its poster's time; its poster at 3 s (orange) and its video from 0 (black)
    # make its disc dark on a bright poster, as the page's is.
    run([binary, "card", root + "/reveal.mp4", "--size", "%dx%d" % (width, height), "--at", "%.3f" % (1 + seconds),
         "--poster-at", "3", "--start", "0", "--background", "white", "-o", engine_path])
    engine = decode(engine_path)
    buttons = button_mask(width, height)
    outside = lambda x, y: buttons(x, y) or not inside_card(width, height, x, y)
    page_area = dark_pixels(shot, outside)
    engine_area = dark_pixels(engine, outside)
    progress = ease_in_out(seconds / 0.6)
    radius = (0.05 + 0.95 * progress) * math.hypot(width, height) / 2
    formula = sum(1 for y in range(height) for x in range(width)
                  if not outside(x, y) and (x + 0.5 - width / 2) ** 2 + (y + 0.5 - height / 2) ** 2 <= radius * radius)
    check(engine_area > 0 and abs(page_area - engine_area) <= 0.05 * engine_area,
          "reveal at %.3f s: the page's disc %d px vs `card --at %.3f` %d px (%.1f %%; formula %d px)"
          % (seconds, page_area, 1 + seconds, engine_area, 100 * (page_area - engine_area) / max(1, engine_area), formula))
    # The disc is centred and the poster is outside it: no dark pixel beyond the radius (+2 px of edge).
    _, _, raw = shot
    stray = sum(1 for y in range(height) for x in range(width)
                if not outside(x, y) and (x + 0.5 - width / 2) ** 2 + (y + 0.5 - height / 2) ** 2 > (radius + 2) ** 2
                and luma(raw, (y * width + x) * 3) < 40)
    check(stray == 0, "outside the disc the poster shows (%d dark pixels past the radius)" % stray)
    # At 0.7 s the preview fills the frame.
    driver.execute_script("""
        const a = arguments[0].querySelector('.pl-stage').getAnimations().find(a => a.animationName === 'pl-reveal');
        a.currentTime = 700;""", card)
    wait_for("data-reveal-ms at the end", lambda: int(card.get_attribute("data-reveal-ms") or 0) >= 600, limit=10)
    time.sleep(0.2)
    full = rgb(card.screenshot_as_png, work)
    inside = sum(1 for y in range(height) for x in range(width) if not outside(x, y))
    filled = dark_pixels(full, outside)
    check(filled >= 0.99 * inside, "at 0.7 s the preview fills the frame (%d of %d pixels)" % (filled, inside))
    clip = driver.execute_script("return getComputedStyle(arguments[0].querySelector('.pl-stage')).clipPath", card)
    check(clip.replace(" ", "") == "circle(70.7107%at50%50%)", "the final clip-path is the whole diagonal (%s)" % clip)
    driver.execute_script("""
        const card = arguments[0];
        card.querySelector('.pl-stage').getAnimations().forEach(a => a.play());
        const video = card.querySelector('video'); if (video) video.play();""", card)
    close_card(driver, card)


def check_reduced_motion(driver):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    card = card_named(driver, "reveal")
    open_card(driver, card)
    state = driver.execute_script("""
        const stage = arguments[0].querySelector('.pl-stage');
        const animations = stage.getAnimations();
        animations.forEach(a => { a.pause(); a.currentTime = 300; });
        const properties = animations.flatMap(a => a.effect.getKeyframes().flatMap(k => Object.keys(k)));
        const style = getComputedStyle(stage);
        return {names: animations.map(a => a.animationName), properties: properties, clip: style.clipPath,
                opacity: parseFloat(style.opacity)};""", card)
    check(state["names"] == ["pl-fade"] and "clipPath" not in state["properties"] and "opacity" in state["properties"],
          "reduced motion: one opacity animation, no clip-path animation (%s)" % state)
    check(state["clip"] == "none" and 0.3 < state["opacity"] < 0.7,
          "reduced motion: no clip-path, halfway faded at 0.3 s (opacity %.2f)" % state["opacity"])
    driver.execute_script("arguments[0].querySelector('.pl-stage').getAnimations().forEach(a => a.play())", card)
    close_card(driver, card)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "no-preference"}]})


def network_exchanges(driver):
    """The requests the browser made since the last call, from its DevTools Network events: for each, its
    URL, resource type, the headers it really carried (`requestWillBeSentExtraInfo`, client hints included),
    its response (status, headers, whether from the disk cache) and whether Blink's memory cache served it."""
    exchanges = {}
    for entry in driver.get_log("performance"):
        event = json.loads(entry["message"])["message"]
        params = event.get("params", {})
        if "requestId" not in params:
            continue
        exchange = exchanges.setdefault(params["requestId"], {"id": params["requestId"], "sent": {}, "response": None,
                                                              "memory_cache": False, "finished": False})
        method = event.get("method")
        if method == "Network.requestWillBeSent":
            exchange["url"] = params["request"]["url"]
            exchange["type"] = params.get("type")
        elif method == "Network.requestWillBeSentExtraInfo":
            exchange["sent"] = {name.lower(): value for name, value in params.get("headers", {}).items()}
        elif method == "Network.responseReceived":
            response = params["response"]
            exchange["response"] = {"status": response.get("status"), "from_disk_cache": response.get("fromDiskCache", False),
                                    "headers": {name.lower(): value for name, value in response.get("headers", {}).items()}}
        elif method == "Network.requestServedFromCache":
            exchange["memory_cache"] = True
        elif method == "Network.loadingFinished":
            exchange["finished"] = True
    return [exchange for exchange in exchanges.values() if "url" in exchange]


def frames(path):
    """A picture's codec and decoded frame count, by the ffmpeg CLI's ffprobe."""
    stream = json.loads(run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                             "stream=codec_name,nb_read_frames", "-of", "json", path]).stdout)["streams"][0]
    return stream["codec_name"], int(stream.get("nb_read_frames", 0))


def check_reduced_motion_still(base, downloads, work, reduce_switch="--force-prefers-reduced-motion"):
    """`animated.gif` as an <img> of the feed page, in one browser profile opened twice (its Network events
    kept): first with no preference, then with reduced motion (`reduce_switch`, Chromium's own setting, as a
    user's system setting gives it; `prefers-reduced-motion` is emulated to match). Each time the image
    request itself carries `Sec-CH-Prefers-Reduced-Motion` with the browser's preference (the fresh profile
    sends it only because the page asked for it in Accept-CH), and the body the image got, read back from
    the browser and decoded by ffprobe, is a GIF of several frames for no-preference and a one-frame PNG,
    smaller, for reduce. The second browser finds the first one's disk cache (the posters come from it),
    and the animation cached there under `Vary: Sec-CH-Prefers-Reduced-Motion` is not what the reduce
    request gets.

    Chromium applies an emulated prefers-reduced-motion (`Emulation.setEmulatedMedia`) to media queries and
    to navigations' client hints, but not to its subresources' hints: with emulation alone an <img> still
    says no-preference, and gets the animation. Hence the switch."""
    path = "/motion.mp4/animated.gif?width=160&length=1"
    answers = []
    for visit, (preference, extra) in enumerate((("no-preference", []), ("reduce", [reduce_switch] if reduce_switch else []))):
        driver = browser(downloads + "-motion", network_log=True, extra=extra)
        try:
            driver.set_script_timeout(RENDER_WAIT)      # the image's onload waits for a render
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                   {"features": [{"name": "prefers-reduced-motion", "value": preference}]})
            driver.get(base + "/")
            wait_posters(driver)
            loaded = driver.execute_async_script("""
                const [path, done] = arguments;
                const image = new Image();
                image.onload = () => done({width: image.naturalWidth, plays: document.querySelectorAll('.pl-play').length,
                                           matches: matchMedia('(prefers-reduced-motion: reduce)').matches});
                image.onerror = () => done(null);
                image.src = path;
                document.body.append(image);""", path)
            exchanges = network_exchanges(driver)
            posters = [exchange for exchange in exchanges if "/thumbnail.jpg" in exchange["url"] and exchange["response"]]
            mine = [exchange for exchange in exchanges if exchange["url"] == base + path]
            if visit == 1:
                cached = sum(1 for exchange in posters if exchange["response"]["from_disk_cache"])
                check(cached > 0, "reduce: the second browser finds the first one's disk cache (%d of %d posters from it)"
                      % (cached, len(posters)))
            if not check(loaded is not None and len(mine) == 1 and mine[0]["response"] is not None,
                         "%s: the <img> of %s loads through one request (%s, %d requests)" % (preference, path, loaded, len(mine))):
                answers.append(None)
                continue
            exchange = mine[0]
            body = driver.execute_cdp_cmd("Network.getResponseBody", {"requestId": exchange["id"]})
        finally:
            driver.quit()
            processes.remove(driver)
        data = base64.b64decode(body["body"]) if body.get("base64Encoded") else body["body"].encode()
        file = os.path.join(work, "motion-%d.bin" % visit)
        with open(file, "wb") as handle:
            handle.write(data)
        codec, count = frames(file)
        headers = exchange["response"]["headers"]
        answers.append(data)
        source = ("the memory cache" if exchange["memory_cache"] else "the disk cache" if exchange["response"]["from_disk_cache"]
                  else "the network")
        sent = exchange["sent"].get("sec-ch-prefers-reduced-motion")
        check(loaded["matches"] == (preference == "reduce") and (loaded["plays"] == 0) == (preference == "reduce"),
              "%s: the page follows it (matchMedia reduce %s; %d play buttons)" % (preference, loaded["matches"], loaded["plays"]))
        check(sent == preference, "%s: the image request carries Sec-CH-Prefers-Reduced-Motion: %s (sent %s)"
              % (preference, preference, sent))
        vary = [name.strip().lower() for name in headers.get("vary", "").split(",")]
        expected = ("image/png", "png") if preference == "reduce" else ("image/gif", "gif")
        check(headers.get("content-type") == expected[0] and codec == expected[1] and (count == 1) == (preference == "reduce")
              and count >= 1 and "sec-ch-prefers-reduced-motion" in vary,
              "%s: the image got %s, %d bytes, %s with %d frame(s) by ffprobe, Vary: %s (from %s)"
              % (preference, headers.get("content-type"), len(data), codec, count, headers.get("vary"), source))
    if None not in answers:
        check(len(answers[0]) > len(answers[1]),
              "the animation (%d bytes) is larger than the still (%d bytes)" % (len(answers[0]), len(answers[1])))


def check_video_loop(driver):
    card = card_named(driver, "motion")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", card)
    open_card(driver, card)
    video = card.find_element(By.CSS_SELECTOR, "video")
    wait_for("the preview to play", lambda: driver.execute_script(
        "const v = arguments[0]; return v.readyState >= 2 && !v.paused && v.currentTime > 0.3", video))
    facts = driver.execute_script("const v = arguments[0]; return [v.muted, v.playsInline, v.hasAttribute('muted')]", video)
    check(facts == [True, True, True], "the preview is muted and playsinline (%s)" % facts)
    first = driver.execute_script("return arguments[0].currentTime", video)
    samples, wrapped, previous = [], None, first
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        now = driver.execute_script("return arguments[0].currentTime", video)
        samples.append(now)
        if now > previous + 0.05 and wrapped is None:
            advanced = True
        if previous > 2.0 and now < previous - 1.0:
            wrapped = now
            break
        previous = now
        time.sleep(0.05)
    check(max(samples) > first, "the preview plays: currentTime advances (%.2f → %.2f)" % (first, max(samples)))
    check(wrapped is not None and wrapped < 1.0 and max(samples) < 3.6,
          "with preview_length=3 it wraps back to < 1 s (to %s after at most %.2f s)" % (wrapped, max(samples)))
    return card


def check_capture(driver, binary, root, work, downloads):
    card = card_named(driver, "motion")
    if card.get_attribute("data-state") != "playing":
        open_card(driver, card)
    video = card.find_element(By.CSS_SELECTOR, "video")
    wait_for("the preview to play", lambda: driver.execute_script("return arguments[0].currentTime > 0.5", video))
    shutter = card.find_element(By.CSS_SELECTOR, ".pl-capture")
    check(shutter.get_attribute("aria-label") == "Capture still", "the capture button is named Capture still")
    before = set(os.listdir(downloads))
    shutter.click()
    path = wait_for("the still's download", lambda: next((os.path.join(downloads, name) for name in os.listdir(downloads)
                                                          if name not in before and name.endswith(".jpg")), None))
    wait_for("the download to finish", lambda: not any(name.endswith(".crdownload") for name in os.listdir(downloads)))
    reported = card.get_attribute("data-capture-time")
    url = card.get_attribute("data-capture-url") or ""
    size = re.search(r"width=(\d+)&height=(\d+)", url)
    check(size is not None and size.groups() == ("640", "360"), "the still is full size (%s)" % url)
    reference = os.path.join(work, "thumb.jpg")
    run([binary, "thumb", root + "/motion.mp4", "--at", reported, "--size", "640x360", "-o", reference])
    psnr = run(["ffmpeg", "-v", "info", "-i", path, "-i", reference, "-lavfi", "psnr", "-f", "null", "-"]).stderr.decode()
    average = re.search(r"average:(\S+)", psnr)
    value = float(average.group(1)) if average else 0.0
    check(value >= 35, "the captured still at %s s matches `thumb --at %s` (PSNR %s dB)" % (reported, reported, value))
    # Press and hold about a second: an MP4 of that length from the press.
    before = set(os.listdir(downloads))
    ActionChains(driver).click_and_hold(shutter).pause(1.2).release(shutter).perform()
    clip = wait_for("the recording's download", lambda: next((os.path.join(downloads, name) for name in os.listdir(downloads)
                                                              if name not in before and name.endswith(".mp4")), None))
    wait_for("the download to finish", lambda: not any(name.endswith(".crdownload") for name in os.listdir(downloads)))
    length = float(card.get_attribute("data-capture-length") or 0)
    duration = float(run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", clip]).stdout or 0)
    check(1.1 <= length <= 10 and abs(duration - length) < 0.25,
          "holding records press to release: an MP4 of %.2f s for a %.2f s hold" % (duration, length))
    close_card(driver, card)


def check_keyboard(driver):
    body = driver.find_element(By.TAG_NAME, "body")
    driver.execute_script("window.scrollTo(0, 0); document.activeElement && document.activeElement.blur()")
    for _ in range(30):
        body.send_keys(Keys.TAB) if driver.switch_to.active_element.tag_name == "body" else \
            driver.switch_to.active_element.send_keys(Keys.TAB)
        if "pl-play" in (driver.switch_to.active_element.get_attribute("class") or ""):
            break
    play = driver.switch_to.active_element
    check("pl-play" in (play.get_attribute("class") or ""), "Tab reaches a play button")
    outline = driver.execute_script("return getComputedStyle(arguments[0]).outlineStyle", play)
    check(outline != "none", "the focused play button shows its focus (outline %s)" % outline)
    card = play.find_element(By.XPATH, "..")
    play.send_keys(Keys.ENTER)
    wait_for("Enter to open", lambda: card.get_attribute("data-state") == "playing", limit=10)
    check("pl-close" in (driver.switch_to.active_element.get_attribute("class") or ""), "Enter opens; focus moves to Close video")
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_for("Escape to close", lambda: card.get_attribute("data-state") == "poster", limit=10)
    check(driver.switch_to.active_element == play, "Escape closes; focus returns to Play video")
    play.send_keys(Keys.SPACE)
    wait_for("Space to open", lambda: card.get_attribute("data-state") == "playing", limit=10)
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    wait_for("Enter on close", lambda: card.get_attribute("data-state") == "poster", limit=10)
    check(True, "Space opens and Enter on Close video returns to the poster")


def storyboard_cues(track):
    """A WebVTT storyboard's cues as (start, end, picture, x, y, w, h)."""
    def clock(text):
        return sum(float(part) * 60 ** power for power, part in enumerate(reversed(text.split(":"))))
    cues = []
    lines = track.splitlines()
    for index, line in enumerate(lines):
        timing = re.match(r"\s*([\d:.]+)\s+-->\s+([\d:.]+)", line)
        if timing and index + 1 < len(lines):
            target = re.match(r"(.*)#xywh=(\d+),(\d+),(\d+),(\d+)", lines[index + 1].strip())
            if target:
                cues.append((clock(timing.group(1)), clock(timing.group(2)), target.group(1), *map(int, target.groups()[1:])))
    return cues


def check_scrub(driver, card, cues, fraction, limit, where=""):
    """Moves the mouse `fraction` of the way across the card; the scrub tile must be the one `cues` place
    at that fraction of the track's duration. Returns the tile's background position, or None."""
    width = card.size["width"]
    x = int(width * fraction) - width // 2
    ActionChains(driver).move_to_element_with_offset(card, x, 10).perform()
    time_at = (width // 2 + x) / width * cues[-1][1]
    what = "scrubbing%s at %.0f %% (%.2f s)" % (where, 100 * fraction, time_at)
    try:
        wait_for("the scrub tile", lambda: card.get_attribute("data-scrub-time") and
                 abs(float(card.get_attribute("data-scrub-time")) - time_at) < 0.05, limit=limit)
    except TimeoutError:
        check(False, what + " shows a tile (none within %d s; data-scrub-time %s)" % (limit, card.get_attribute("data-scrub-time")))
        return None
    cue = next((c for c in cues if c[0] <= time_at < c[1]), cues[-1])
    tile = driver.execute_script("""const s = arguments[0].querySelector('.pl-scrub').style;
        return [s.backgroundPosition, s.width, s.height, s.backgroundImage]""", card)
    expected = ["%dpx %dpx" % (-cue[3], -cue[4]), "%dpx" % cue[5], "%dpx" % cue[6]]
    check(tile[:3] == expected and cue[2].split("?")[0] in tile[3],
          "%s shows the tile at xywh=%d,%d,%d,%d (%s)" % (what, *cue[3:], tile[:3]))
    return tile[0]


def check_hover_and_scrub(driver, base):
    card = card_named(driver, "motion")
    driver.execute_script("""
        const card = arguments[0];
        window.__enter = null; window.__hover = null;
        card.addEventListener('pointerenter', () => { window.__enter = performance.now(); }, {capture: true});
        new MutationObserver(() => { if (card.dataset.state === 'hover' && window.__hover === null) window.__hover = performance.now(); })
            .observe(card, {attributes: true, attributeFilter: ['data-state']});""", card)
    width = card.size["width"]
    offset = int(width * 0.25) - width // 2      # a quarter of the way across
    ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, ".pl-header")).perform()
    ActionChains(driver).move_to_element_with_offset(card, offset, 0).perform()
    wait_for("the hover preview", lambda: card.get_attribute("data-state") == "hover")
    times = driver.execute_script("return [window.__enter, window.__hover, arguments[0].dataset.hoverDelayMs]", card)
    delay = times[1] - times[0]
    check(delay >= 250, "hover starts the preview after %.0f ms over the card (page says %s ms), not before 250" % (delay, times[2]))
    stage = driver.execute_script("""const s = getComputedStyle(arguments[0].querySelector('.pl-stage'));
        return [s.visibility, s.clipPath, !!arguments[0].querySelector('video')]""", card)
    check(stage == ["visible", "none", True], "the hover preview plays in place, with no reveal (%s)" % stage)
    # Scrubbing: the tile of the pointer's time, as the server's storyboard index places it.
    storyboard = card.get_attribute("data-storyboard")
    cues = storyboard_cues(urllib.request.urlopen(base + storyboard, timeout=RENDER_WAIT).read().decode())
    check(len(cues) > 1, "the storyboard index has %d cues" % len(cues))
    for fraction in (0.25, 0.8):
        check_scrub(driver, card, cues, fraction, limit=60)
    ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, ".pl-header")).perform()
    wait_for("leaving to return to the poster", lambda: card.get_attribute("data-state") == "poster", limit=10)
    check(card.find_elements(By.CSS_SELECTOR, "video") == [], "leaving the card returns to the poster")


def check_three_at_once(driver):
    cards = driver.find_elements(By.CSS_SELECTOR, ".pl-card")[:4]
    for card in cards:
        driver.execute_script("arguments[0].scrollIntoView({block: 'nearest'})", card)
        open_card(driver, card)
    playing = driver.execute_script("return document.querySelectorAll('.pl-card video').length")
    check(playing == 3 and cards[0].get_attribute("data-state") == "poster",
          "at most 3 previews at once: opening a fourth stops the first (%d videos)" % playing)
    for card in cards:
        close_card(driver, card)


def check_cross_origin(driver, binary, root, base):
    """A page on base reads a picture's placeholder header and pixels from a server that allows its
    origin (--allow-origin base), through a preflight too, and cannot from one that does not."""
    allowing = start_server(binary, root, ["--allow-origin", base, "--no-feed"])
    plain = start_server(binary, root, ["--no-feed"])
    facts = driver.execute_async_script("""
        const [allowing, plain, done] = arguments;
        const facts = {};
        const picture = '/landscape.mp4/thumbnail.png?width=64&time=1';
        try {
            const reply = await fetch(allowing + picture);
            facts.status = reply.status;
            facts.thumbhash = reply.headers.get('Thumbhash');
            // If-None-Match is not a safelisted header: the browser sends an OPTIONS preflight first.
            facts.preflighted = (await fetch(allowing + picture, {headers: {'If-None-Match': '"other"'}})).status;
            const image = new Image();
            image.crossOrigin = 'anonymous';
            image.src = allowing + picture;
            await image.decode();
            const canvas = document.createElement('canvas');
            canvas.width = image.naturalWidth; canvas.height = image.naturalHeight;
            const context = canvas.getContext('2d');
            context.drawImage(image, 0, 0);
            facts.pixels = context.getImageData(0, 0, canvas.width, canvas.height).data.length;
        } catch (error) { facts.error = String(error); }
        try { await fetch(plain + picture); facts.plainRead = true; } catch (error) { facts.plainRead = false; }
        done(facts);
    """, allowing, plain)
    check(facts.get("status") == 200 and facts.get("preflighted") == 200 and facts.get("error") is None,
          "--allow-origin: the page reads a picture from the other origin, with and without a preflight (%s)" % facts)
    check(bool(facts.get("thumbhash")) and facts.get("pixels", 0) > 0,
          "--allow-origin: its Thumbhash header and canvas pixels are readable (%s)" % facts)
    check(facts.get("plainRead") is False, "without --allow-origin the other origin's response is not readable from script")


def check_unavailable(driver, binary, work):
    """A file under the root that is not a video (415 for its poster) gets a card that says so, with no
    play button and no preview; the video beside it is unaffected."""
    root = os.path.join(work, "mixed")
    os.makedirs(root)
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "landscape.mp4"), root + "/a-good.mp4")
    with open(root + "/b-notes.mp4", "w") as file:
        file.write("not a video\n")
    base = start_server(binary, root)
    driver.get(base + "/")
    bad = wait_for("the unplayable card to be marked", lambda: driver.execute_script(
        "const c = document.querySelector('.pl-card[data-name=\"b-notes\"]'); return c && c.dataset.unavailable"))
    facts = driver.execute_script("""
        const bad = document.querySelector('.pl-card[data-name="b-notes"]');
        const good = document.querySelector('.pl-card[data-name="a-good"]');
        bad.querySelector('.pl-poster-link').click();
        return {playHidden: bad.querySelector('.pl-play').hidden, state: bad.dataset.state,
                videos: bad.querySelectorAll('video').length, text: getComputedStyle(bad, '::after').content,
                good: good.dataset.unavailable === undefined && !good.querySelector('.pl-play').hidden};
    """)
    check(bad == "415" and facts["playHidden"] and facts["state"] == "poster" and facts["videos"] == 0
          and "unavailable" in facts["text"] and facts["good"],
          "a file that is not a video gets an unavailable card (status %s) that does not play; its neighbour is unaffected (%s)"
          % (bad, facts))


def check_hundred(binary, downloads, work):
    root = os.path.join(work, "hundred")
    os.makedirs(root)
    fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "landscape.mp4")
    shutil.copy(fixture, root + "/clip-000.mp4")
    for index in range(1, 100):
        os.link(root + "/clip-000.mp4", root + "/clip-%03d.mp4" % index)
    base = start_server(binary, root)
    driver = browser(downloads + "-hundred")
    driver.get(base + "/")
    cards = len(driver.find_elements(By.CSS_SELECTOR, ".pl-card"))
    loaded = wait_posters(driver, within_view_only=True)
    time.sleep(1)
    facts = driver.execute_script("""
        const cards = [...document.querySelectorAll('.pl-card')].filter(c => { const r = c.getBoundingClientRect();
            return r.bottom > 0 && r.top < innerHeight; });
        const entries = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'));
        return {visible: cards.length, bytes: entries.reduce((s, e) => s + (e.transferSize || 0), 0),
                posters: entries.filter(e => e.name.includes('thumbnail.jpg')).length,
                video: entries.filter(e => e.initiatorType === 'video' || /animated\\.mp4|\\.mp4($|\\?)/.test(e.name.replace(/\\/[^/]*\\.mp4\\//, '/'))).map(e => e.name)};""")
    check(cards == 100, "the 100-clip root gives 100 cards (%d)" % cards)
    check(facts["visible"] > 0 and facts["bytes"] <= 100_000 * facts["visible"],
          "before any interaction: %d bytes for %d visible cards (%d per card; %d posters fetched of 100)"
          % (facts["bytes"], facts["visible"], facts["bytes"] // max(1, facts["visible"]), facts["posters"]))
    check(facts["video"] == [], "no video bytes before a hover or play (%s)" % facts["video"])
    errors = console_errors(driver)
    check(errors == [], "the 100-card page logs no console error (%s)" % errors)
    print("     %d posters loaded in view" % loaded)


def check_export_from_file(binary, root, downloads, work):
    """`batch export-page` opened from file:// in a browser of its own: every poster loads, scrubbing over
    a card shows the tiles its thumbnails.vtt places (read from the folder, the oracle), a sheet they
    name loads, and the console has no error (a page from file:// may not fetch)."""
    clips = os.path.join(work, "export-clips.txt")
    with open(clips, "w") as file:
        file.write(root + "/motion.mp4\n" + root + "/landscape.mp4\n")
    recipe = os.path.join(work, "export-recipe.json")
    with open(recipe, "w") as file:
        json.dump({"poster": {}, "sprites": {"every": 1}, "hover": {"length": 2}}, file)
    out = os.path.join(work, "export")
    run([binary, "batch", clips, "--out", out, "--recipe", recipe, "--quiet"])
    run([binary, "batch", "export-page", out])
    driver = browser(downloads + "-export")
    driver.get("file://" + urllib.request.pathname2url(out + "/index.html"))
    posters = wait_posters(driver)
    check(posters == 2, "from file://: every poster of the export loads (%d of 2)" % posters)
    card = card_named(driver, "motion")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", card)
    storyboard = card.get_attribute("data-storyboard") or ""
    with open(os.path.join(out, urllib.request.url2pathname(storyboard)), encoding="utf-8") as file:
        cues = storyboard_cues(file.read())
    check(len(cues) > 1, "the export's %s has %d cues" % (storyboard, len(cues)))
    ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, ".pl-header")).perform()
    positions = [check_scrub(driver, card, cues, fraction, limit=10, where=" from file://") for fraction in (0.25, 0.8)]
    check(None not in positions and positions[0] != positions[1],
          "from file://: scrubbing across the card changes the tile shown (%s)" % positions)
    picture = driver.execute_async_script("""
        const [card, done] = arguments;
        const url = /url\\("(.*)"\\)/.exec(card.querySelector('.pl-scrub').style.backgroundImage);
        if (!url) { done(null); return; }
        const image = new Image();
        image.onload = () => done([image.naturalWidth, image.naturalHeight]);
        image.onerror = () => done(null);
        image.src = url[1];""", card)
    check(bool(picture) and picture[0] > 0, "from file://: the sheet the tile names loads (%s)" % picture)
    ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, ".pl-header")).perform()
    errors = console_errors(driver)
    check(errors == [], "from file://: the console has no errors (%s)" % errors)
    # A poster gone from the folder: the card is unavailable at once, and the page fetches nothing (its
    # one console error is the picture's own failed load).
    poster = card_named(driver, "landscape").find_element(By.CSS_SELECTOR, ".pl-poster").get_attribute("src")
    missing = out + "-missing"        # a copy, so that no cache has its pictures
    shutil.copytree(out, missing)
    os.remove(os.path.join(missing, os.path.relpath(urllib.request.url2pathname(urllib.parse.urlparse(poster).path), out)))
    driver.get("file://" + urllib.request.pathname2url(missing + "/index.html"))
    try:
        status = wait_for("the card without a poster to be marked", lambda: driver.execute_script(
            "const c = document.querySelector('.pl-card[data-name=\"landscape\"]'); return c && c.dataset.unavailable"), limit=10)
    except TimeoutError:
        status = None
    errors = [entry["message"] for entry in console_errors(driver)]
    check(status == "0" and len(errors) == 1 and "poster.jpg" in errors[0],
          "from file://: a missing poster marks its card unavailable (%s) with no fetch (%s)" % (status, errors))


def display_aspect(path):
    """A clip's display shape, width / height, by the ffmpeg CLI's ffprobe (rotation and pixel shape applied)."""
    out = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
               "stream=width,height,sample_aspect_ratio:stream_side_data=rotation", "-of", "json", path]).stdout
    stream = json.loads(out)["streams"][0]
    width, height = stream["width"], stream["height"]
    sar = stream.get("sample_aspect_ratio", "1:1")
    if sar not in ("0:1", "N/A") and ":" in sar:
        num, den = (int(part) for part in sar.split(":"))
        if num > 0 and den > 0:
            width = width * num / den
    rotation = next((int(item["rotation"]) for item in stream.get("side_data_list", []) if "rotation" in item), 0)
    return height / width if rotation % 180 else width / height


CARD_FACTS = """
    return [...document.querySelectorAll('.pl-card')].map(card => {
        const img = card.querySelector('img.pl-poster');
        return {name: card.dataset.name, width: card.clientWidth, height: card.clientHeight,
                natural: [img.naturalWidth, img.naturalHeight], complete: img.complete, src: img.currentSrc,
                background: getComputedStyle(card).backgroundColor, inline: card.style.backgroundColor,
                loaded: img.classList.contains('pl-loaded')};
    });"""


def hex_rgb(color):
    return "rgb(%d, %d, %d)" % tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


def check_shapes(binary, work, downloads):
    """A portrait clip (made here, 360x640 like a phone's) and a landscape one on a server of their own:
    the portrait card is taller than wide and its poster keeps the clip's shape (nothing cut at the top
    or bottom: the poster's natural aspect against the clip's display aspect by ffprobe, and against the
    card's box); a second visit paints each card's placeholder colour (the poster's Dominant-Color
    header) before any poster arrives (posters blocked), and no page asks for placeholder.json."""
    root = os.path.join(work, "shapes")
    os.makedirs(root)
    run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=360x640:r=25:d=3", "-c:v", "libx264",
         "-pix_fmt", "yuv420p", "-an", root + "/selfie.mp4"])
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures")
    shutil.copy(os.path.join(fixtures, "landscape.mp4"), root + "/landscape.mp4")
    base = start_server(binary, root)
    driver = browser(downloads + "-shapes")
    driver.get(base + "/")
    wait_posters(driver)
    facts = {card["name"]: card for card in driver.execute_script(CARD_FACTS)}
    for name, portrait in (("selfie", True), ("landscape", False)):
        card = facts[name]
        clip = display_aspect(os.path.join(root, name + ".mp4"))
        box = card["width"] / card["height"]
        poster = card["natural"][0] / max(1, card["natural"][1])
        check((card["height"] > card["width"]) == portrait,
              "the %s card is %s (%dx%d CSS px)" % (name, "taller than wide" if portrait else "wider than tall", card["width"], card["height"]))
        check(abs(poster / clip - 1) < 0.02 and abs(poster / box - 1) < 0.02,
              "the %s poster keeps the clip's shape, uncropped: poster %dx%d (%.3f), clip %.3f (ffprobe), card %.3f"
              % (name, card["natural"][0], card["natural"][1], poster, clip, box))
    # The same page again, posters and placeholder.json blocked: each card shows its poster's colour from
    # the first paint, with no request of its own.
    colours = {}
    for name, card in facts.items():
        request = urllib.request.Request(card["src"], method="HEAD")
        with urllib.request.urlopen(request, timeout=RENDER_WAIT) as response:
            colours[name] = response.headers.get("Dominant-Color")
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*thumbnail.jpg*", "*placeholder.json*"]})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    driver.get(base + "/")
    again = {card["name"]: card for card in driver.execute_script(CARD_FACTS)}
    for name, colour in colours.items():
        check(bool(colour) and again[name]["background"] == hex_rgb(colour) and not again[name]["loaded"],
              "the %s card is painted its poster's colour before the poster (%s, header %s, poster loaded: %s)"
              % (name, again[name]["background"], colour, again[name]["loaded"]))
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    asked = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)"
                                  ".filter(n => n.includes('placeholder.json'))")
    check(asked == [], "the page asks for no placeholder.json (%s)" % asked)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *arguments):
        pass


def serve_folder(folder):
    """A static host for `folder` on 127.0.0.1 (a free port), in a thread; shut down on the way out."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    processes.append(server)
    return "http://127.0.0.1:%d" % server.server_address[1]


def check_default_export(binary, work, downloads):
    """`batch DIR --out OUT` with the default recipe, then `batch export-page OUT` (no warning on stderr),
    opened from file:// and over http: every poster is at least twice its card's CSS size (natural size
    against the card's client size x 2), the portrait card is taller than wide, and each card's play
    button opens a playing preview (its video's time advances)."""
    root = os.path.join(work, "shapes")
    out = os.path.join(work, "default-export")
    run([binary, "batch", root, "--out", out, "--quiet"])
    exported = run([binary, "batch", "export-page", out])
    warnings = exported.stderr.decode().strip()
    check(warnings == "", "export-page over a default batch has nothing to warn about (%r)" % warnings)
    driver = browser(downloads + "-default")
    for where, address in (("file://", "file://" + urllib.request.pathname2url(out + "/index.html")),
                           ("http", serve_folder(out) + "/index.html")):
        driver.get(address)
        count = wait_posters(driver)
        facts = driver.execute_script(CARD_FACTS)
        check(count == 2 and len(facts) == 2, "%s: both posters of the default export load (%d)" % (where, count))
        for card in facts:
            check(card["natural"][0] >= card["width"] * 2 and card["natural"][1] >= card["height"] * 2 - 2,
                  "%s: the %s poster is %dx%d for a %dx%d card (at least 2x)"
                  % (where, card["name"], card["natural"][0], card["natural"][1], card["width"], card["height"]))
        portrait = [card for card in facts if "selfie" in card["name"]]
        check(len(portrait) == 1 and portrait[0]["height"] > portrait[0]["width"],
              "%s: the exported portrait card is taller than wide (%s)"
              % (where, ["%dx%d" % (card["width"], card["height"]) for card in portrait]))
        for card in driver.find_elements(By.CSS_SELECTOR, ".pl-card"):
            name = card.get_attribute("data-name")
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", card)
            plays = card.find_elements(By.CSS_SELECTOR, ".pl-play")
            if not check(len(plays) == 1, "%s: the %s card has a play button" % (where, name)):
                continue
            open_card(driver, card)
            try:
                played = wait_for("the preview to play", lambda: driver.execute_script(
                    "const v = arguments[0].querySelector('video'); return v && !v.paused && v.currentTime > 0.3 && v.currentTime",
                    card), limit=30)
            except TimeoutError:
                played = None
            check(bool(played), "%s: play opens a playing preview of %s (at %s s)" % (where, name, played))
            close_card(driver, card)
        errors = console_errors(driver)
        check(errors == [], "%s: the default export logs no console error (%s)" % (where, errors))


def screenshot(driver, base, path, work):
    driver.get(base + "/")
    wait_posters(driver)
    card = card_named(driver, "card")
    open_card(driver, card)
    wait_for("the card's video", lambda: driver.execute_script(
        "const v = arguments[0].querySelector('video'); return v && v.readyState >= 2 && v.currentTime > 1", card))
    driver.execute_script("""const a = arguments[0].querySelector('.pl-stage').getAnimations()[0]; if (a) a.finish();
        arguments[0].querySelector('video').pause(); window.scrollTo(0, 0); document.activeElement.blur();""", card)
    raw = os.path.join(work, "feed-full.png")
    with open(raw, "wb") as file:
        file.write(driver.get_screenshot_as_png())
    # The first row and a half, at three quarters of the size.
    run(["ffmpeg", "-v", "error", "-y", "-i", raw, "-vf", "crop=1280:640:0:0,scale=960:480:flags=lanczos", "-frames:v", "1", path])
    close_card(driver, card)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=".build/release/preview-loop")
    parser.add_argument("--screenshot", default="Docs/feed.png", help="where the page's picture is written ('' for none)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    arguments = parser.parse_args()
    binary = os.path.abspath(arguments.bin)
    work = tempfile.mkdtemp(prefix="feed-check-")
    downloads = os.path.join(work, "downloads")
    os.makedirs(downloads)
    root = os.path.join(work, "trailers")
    os.makedirs(root)
    try:
        make_clips(root)
        fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures")
        shutil.copy(os.path.join(fixtures, "card.mp4"), root + "/card.mp4")
        shutil.copy(os.path.join(fixtures, "landscape.mp4"), root + "/landscape.mp4")
        base = start_server(binary, root)
        driver = browser(downloads)
        driver.get(base + "/?preview_length=3")
        posters = wait_posters(driver)
        check(posters == 4, "every poster loads (natural size > 0): %d of 4" % posters)
        check_reveal(driver, binary, root, work)
        check_reduced_motion(driver)
        check_reduced_motion_still(base, downloads, work)
        check_video_loop(driver)
        check_capture(driver, binary, root, work, downloads)
        check_keyboard(driver)
        check_hover_and_scrub(driver, base)
        check_three_at_once(driver)
        errors = console_errors(driver)
        check(errors == [], "the console has no errors (%s)" % errors)
        check_cross_origin(driver, binary, root, base)   # its refused read logs an error on purpose
        check_unavailable(driver, binary, work)          # its refused poster logs an error on purpose
        if arguments.screenshot:
            screenshot(driver, base, arguments.screenshot, work)
            print("     wrote " + arguments.screenshot)
        check_hundred(binary, downloads, work)
        check_export_from_file(binary, root, downloads, work)
        check_shapes(binary, work, downloads)
        check_default_export(binary, work, downloads)
    except Exception as error:        # a timeout or a missing element is a failure, reported as one line
        check(False, "%s: %s" % (type(error).__name__, str(error).splitlines()[0] if str(error) else ""))
    finally:
        for process in reversed(processes):
            try:
                if isinstance(process, subprocess.Popen):
                    process.terminate()
                    process.wait(timeout=15)
                elif isinstance(process, http.server.HTTPServer):
                    process.shutdown()
                    process.server_close()
                else:
                    process.quit()
            except Exception:
                pass
        if not arguments.keep:
            shutil.rmtree(work, ignore_errors=True)
            for suffix in ("-profile", "-motion", "-motion-profile", "-hundred", "-hundred-profile", "-export",
                           "-export-profile", "-shapes", "-shapes-profile", "-default", "-default-profile"):
                shutil.rmtree(downloads + suffix, ignore_errors=True)
    print("feed-check: %s" % ("%d failed: %s" % (len(failures), "; ".join(failures)) if failures else "all passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

// PreviewLoop feed: the card's behaviour on the web. Plain JavaScript, no dependency.
// States of a card (data-state): poster, hover (the muted preview in place, no reveal) and playing
// (opened by the play button through the reveal). The page reports what it did in data attributes
// (data-reveal-ms, data-hover-delay-ms, data-scrub-time, data-capture-time) for tests and tools.
(function () {
  "use strict";
  const root = document.documentElement;
  root.classList.remove("pl-nojs");
  root.classList.add("pl-js");
  const body = document.body;
  const hoverDelay = 250;
  const holdThreshold = 400;
  const maxPlaying = Math.max(1, parseInt(body.dataset.maxPlaying || "3", 10) || 3);
  const pageLength = parseFloat(body.dataset.previewLength || "15") || 15;
  const recordCap = parseFloat(body.dataset.recordMaxLength || "10") || 10;
  const active = [];          // cards with a video, oldest first
  const visible = new Set();
  let lastOpened = null;

  function previewLength(card) {
    const own = parseFloat(card.dataset.previewLength || "");
    return own > 0 ? own : pageLength;
  }

  function seconds(value) { return (Math.round(value * 1000) / 1000).toFixed(3); }

  function startVideo(card) {
    let video = card.querySelector("video");
    if (!video) {
      video = document.createElement("video");
      video.muted = true;
      video.defaultMuted = true;
      video.setAttribute("muted", "");
      video.playsInline = true;
      video.setAttribute("playsinline", "");
      video.loop = true;
      video.preload = "auto";
      video.disablePictureInPicture = true;
      video.src = card.dataset.video;
      card.querySelector(".pl-stage").append(video);
    }
    // The PlayerView loop: back to the start every previewLength seconds, whatever the file's length.
    clearInterval(card.plWrap);
    card.plWrap = setInterval(function () { video.currentTime = 0; }, previewLength(card) * 1000);
    const index = active.indexOf(card);
    if (index >= 0) active.splice(index, 1);
    active.push(card);
    while (active.length > maxPlaying) stop(active[0], false);
    const playing = video.play();
    if (playing) playing.catch(function () {});
    return video;
  }

  function stop(card, restoreFocus) {
    clearInterval(card.plWrap);
    clearTimeout(card.plHoverTimer);
    const index = active.indexOf(card);
    if (index >= 0) active.splice(index, 1);
    const video = card.querySelector("video");
    if (video) {
      video.pause();
      video.removeAttribute("src");
      video.load();
      video.remove();
    }
    const wasPlaying = card.dataset.state === "playing";
    card.dataset.state = "poster";
    delete card.dataset.revealMs;
    setHidden(card, ".pl-close", true);
    setHidden(card, ".pl-capture", true);
    if (lastOpened === card) lastOpened = null;
    if (wasPlaying && restoreFocus) {
      const play = card.querySelector(".pl-play");
      if (play) play.focus({ preventScroll: true });
    }
  }

  function setHidden(card, selector, hidden) {
    const element = card.querySelector(selector);
    if (element) element.hidden = hidden;
  }

  function open(card) {
    if (!card.dataset.video || "unavailable" in card.dataset) return;
    clearTimeout(card.plHoverTimer);
    card.dataset.state = "playing";
    startVideo(card);
    lastOpened = card;
    setHidden(card, ".pl-close", false);
    setHidden(card, ".pl-capture", !(card.dataset.still || card.dataset.record));
    const close = card.querySelector(".pl-close");
    if (close) close.focus({ preventScroll: true });
    trackReveal(card);
  }

  // Reports the reveal's elapsed time (its animation's own clock) while it runs.
  function trackReveal(card) {
    const stage = card.querySelector(".pl-stage");
    function tick() {
      if (card.dataset.state !== "playing") return;
      const animation = stage.getAnimations().find(function (item) { return item.animationName; });
      if (!animation) { card.dataset.revealMs = "600"; return; }
      card.dataset.revealMs = String(Math.round(Number(animation.currentTime) || 0));
      if (animation.playState !== "finished") requestAnimationFrame(tick);
    }
    requestAnimationFrame(tick);
  }

  function startHover(card) {
    if (card.dataset.state !== "poster" || !card.dataset.video || !visible.has(card) || "unavailable" in card.dataset) return;
    card.dataset.state = "hover";
    card.dataset.hoverDelayMs = String(Math.round(performance.now() - card.plEnteredAt));
    startVideo(card);
  }

  // Storyboard tracks the page carries (a static export): an object from a card's data-storyboard to
  // the track's text, read instead of fetching it, which a page opened from file:// may not do.
  const carriedTracks = (function () {
    const element = document.getElementById("pl-storyboards");
    if (!element) return {};
    try {
      const value = JSON.parse(element.textContent);
      return value && typeof value === "object" ? value : {};
    } catch (error) {
      return {};
    }
  })();

  // Storyboard: WebVTT cues `start --> end` then `picture#xywh=x,y,w,h`, picture relative to the track.
  function loadStoryboard(card) {
    if (card.plStoryboard || !card.dataset.storyboard) return card.plStoryboard;
    const address = new URL(card.dataset.storyboard, document.baseURI);
    const carried = Object.prototype.hasOwnProperty.call(carriedTracks, card.dataset.storyboard)
      ? carriedTracks[card.dataset.storyboard] : null;
    const track = typeof carried === "string" ? Promise.resolve(carried) : fetch(address).then(function (response) {
      if (!response.ok) throw new Error("storyboard " + response.status);
      return response.text();
    });
    card.plStoryboard = track.then(function (text) {
      const cues = [];
      const lines = text.split(/\r?\n/);
      for (let i = 0; i < lines.length; i++) {
        const timing = /^\s*([\d:.]+)\s+-->\s+([\d:.]+)/.exec(lines[i]);
        if (!timing || i + 1 >= lines.length) continue;
        const target = /^(.*)#xywh=(\d+),(\d+),(\d+),(\d+)\s*$/.exec(lines[i + 1].trim());
        if (!target) continue;
        cues.push({ start: clock(timing[1]), end: clock(timing[2]), url: new URL(target[1], address).href,
                    x: +target[2], y: +target[3], w: +target[4], h: +target[5] });
      }
      return cues;
    }).catch(function () { return []; });
    return card.plStoryboard;
  }

  function clock(text) {
    return text.split(":").reduce(function (total, part) { return total * 60 + parseFloat(part); }, 0);
  }

  function scrub(card, event) {
    if ("unavailable" in card.dataset) return;
    const promise = loadStoryboard(card);
    if (!promise) return;
    const fraction = Math.min(1, Math.max(0, (event.clientX - card.getBoundingClientRect().left) / card.clientWidth));
    promise.then(function (cues) {
      if (!cues.length) return;
      const duration = cues[cues.length - 1].end;
      const time = fraction * duration;
      const cue = cues.find(function (item) { return time >= item.start && time < item.end; }) || cues[cues.length - 1];
      const tile = card.querySelector(".pl-scrub");
      tile.style.width = cue.w + "px";
      tile.style.height = cue.h + "px";
      tile.style.transform = "scale(" + card.clientWidth / cue.w + ", " + card.clientHeight / cue.h + ")";
      const picture = 'url("' + cue.url.replace(/["\\\n]/g, encodeURIComponent) + '")';
      if (tile.plPicture !== picture) { tile.style.backgroundImage = picture; tile.plPicture = picture; }
      tile.style.backgroundPosition = -cue.x + "px " + -cue.y + "px";
      card.dataset.scrubTime = seconds(time);
      card.dataset.scrubbing = "";
      clearTimeout(card.plScrubTimer);
      card.plScrubTimer = setTimeout(function () { delete card.dataset.scrubbing; }, 700);
    });
  }

  function download(url, name) {
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.hidden = true;
    body.append(link);
    link.click();
    link.remove();
  }

  function baseName(card) {
    return (card.dataset.name || "preview").replace(/[^\w.-]+/g, "_");
  }

  // A tap saves the frame shown as a full-size still; a press held past holdThreshold records from
  // press to release as an animated.mp4.
  function capture(card, pressedAt, pressedTime) {
    const video = card.querySelector("video");
    if (!video) return;
    const held = pressedAt === null ? 0 : (performance.now() - pressedAt) / 1000;
    if (held * 1000 >= holdThreshold && card.dataset.record) {
      const start = pressedTime;
      const length = Math.min(recordCap, Math.max(0.5, held));
      const url = card.dataset.record + (card.dataset.record.includes("?") ? "&" : "?")
        + "start=" + seconds(start) + "&length=" + seconds(length);
      card.dataset.captureTime = seconds(start);
      card.dataset.captureLength = seconds(length);
      download(url, baseName(card) + "-" + seconds(start) + ".mp4");
      return;
    }
    if (!card.dataset.still) return;
    const time = video.currentTime;
    card.dataset.captureTime = seconds(time);
    delete card.dataset.captureLength;
    const still = card.dataset.still + (card.dataset.still.includes("?") ? "&" : "?") + "time=" + seconds(time) + "&accuracy=exact";
    const finish = function (size) {
      const url = still + (size ? "&width=" + size[0] + "&height=" + size[1] : "");
      card.dataset.captureUrl = url;
      download(url, baseName(card) + "-" + seconds(time) + ".jpg");
    };
    if (!card.dataset.probe) { finish(null); return; }
    fetch(new URL(card.dataset.probe, document.baseURI)).then(function (response) { return response.json(); })
      .then(function (probe) {
        const width = probe.display_width || probe.width, height = probe.display_height || probe.height;
        finish(width > 0 && height > 0 ? [width, height] : null);
      }).catch(function () { finish(null); });
  }

  function paintPlaceholder(card) {
    if (!card.dataset.placeholder || card.plPlaceholder) return;
    card.plPlaceholder = true;
    fetch(new URL(card.dataset.placeholder, document.baseURI)).then(function (response) { return response.json(); })
      .then(function (value) {
        const color = value.dominant_color;
        if (typeof color === "string" && /^#[0-9a-fA-F]{6}$/.test(color) && !card.querySelector(".pl-loaded")) {
          card.style.backgroundColor = color;
        }
      }).catch(function () {});
  }

  // A poster that did not load: the server's status says whether to ask again. Busy or slow (503,
  // 504), no answer, or ready by now (200): the picture is asked for again after 1 s, then 2 s. Anything
  // else (415, not a video; 422, corrupt; 404) or a third failure marks the card unavailable
  // (data-unavailable holds the status): no play button, no hover preview, no scrubbing, and
  // "Preview unavailable" in place of the picture. A page opened from file:// has no server to ask (and
  // may not fetch): its missing poster marks the card unavailable at once, with status 0.
  function posterFailed(card, poster) {
    const attempts = card.plPosterAttempts = (card.plPosterAttempts || 0) + 1;
    const address = poster.currentSrc || poster.src;
    const isFile = location.protocol === "file:";
    (isFile ? Promise.resolve(0) : fetch(address, { method: "HEAD", cache: "no-store" })
      .then(function (response) { return response.status; }, function () { return 0; }))
      .then(function (status) {
        if ([0, 200, 503, 504].indexOf(status) >= 0 && attempts < 3 && !isFile) {
          setTimeout(function () { poster.removeAttribute("srcset"); poster.src = address; }, 1000 * attempts);
          return;
        }
        if (card.dataset.state !== "poster") stop(card, false);
        card.dataset.unavailable = String(status);
        setHidden(card, ".pl-play", true);
        delete card.dataset.scrubbing;
      });
  }

  const observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    for (const entry of entries) {
      const card = entry.target;
      if (entry.isIntersecting) {
        visible.add(card);
        paintPlaceholder(card);
      } else {
        visible.delete(card);
        if (card.dataset.state !== "poster") stop(card, false);
      }
    }
  }, { threshold: 0.1 }) : null;

  for (const card of document.querySelectorAll(".pl-card")) {
    const poster = card.querySelector(".pl-poster");
    const link = card.querySelector(".pl-poster-link");
    if (link) link.tabIndex = -1;
    if (poster) {
      const loaded = function () { poster.classList.add("pl-loaded"); };
      poster.addEventListener("load", loaded);
      poster.addEventListener("error", function () { posterFailed(card, poster); });
      if (poster.complete) { if (poster.naturalWidth > 0) loaded(); else if (poster.currentSrc) posterFailed(card, poster); }
    }
    if (observer) observer.observe(card); else visible.add(card);
    const play = card.querySelector(".pl-play");
    if (play) play.addEventListener("click", function (event) { event.preventDefault(); open(card); });
    const close = card.querySelector(".pl-close");
    if (close) close.addEventListener("click", function (event) { event.preventDefault(); stop(card, true); });
    if (link) link.addEventListener("click", function (event) {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      if (card.dataset.state !== "playing") open(card);
    });
    const shutter = card.querySelector(".pl-capture");
    if (shutter) {
      let pressedAt = null, pressedTime = 0;
      shutter.addEventListener("pointerdown", function () {
        const video = card.querySelector("video");
        pressedAt = performance.now();
        pressedTime = video ? video.currentTime : 0;
        shutter.dataset.holding = "";
      });
      const release = function () { delete shutter.dataset.holding; };
      shutter.addEventListener("pointerup", release);
      shutter.addEventListener("pointercancel", function () { release(); pressedAt = null; });
      shutter.addEventListener("contextmenu", function (event) { event.preventDefault(); });
      shutter.addEventListener("click", function (event) {
        event.preventDefault();
        // A keyboard press (detail 0) is a tap.
        capture(card, event.detail === 0 ? null : pressedAt, pressedTime);
        pressedAt = null;
      });
    }
    card.addEventListener("pointerenter", function (event) {
      if (event.pointerType !== "mouse") return;
      card.plEnteredAt = performance.now();
      clearTimeout(card.plHoverTimer);
      card.plHoverTimer = setTimeout(function () { startHover(card); }, hoverDelay);
      loadStoryboard(card);
    });
    card.addEventListener("pointermove", function (event) {
      if (event.pointerType === "mouse" && card.dataset.state !== "playing") scrub(card, event);
    });
    card.addEventListener("pointerleave", function (event) {
      if (event.pointerType !== "mouse") return;
      clearTimeout(card.plHoverTimer);
      delete card.dataset.scrubbing;
      if (card.dataset.state === "hover") stop(card, false);
    });
  }

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    const focused = document.activeElement && document.activeElement.closest ? document.activeElement.closest(".pl-card") : null;
    const card = focused && focused.dataset.state === "playing" ? focused : lastOpened;
    if (card && card.dataset.state === "playing") { event.preventDefault(); stop(card, true); }
  });
})();

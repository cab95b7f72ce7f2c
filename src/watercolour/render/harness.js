// watercolour render harness: runs before p5 and p5.brush load, in the page's main world.
// Placeholders __WC_SEED__, __WC_NONCE__ and __WC_BINDING__ are filled in by harness.py.
// It (1) makes the page deterministic, (2) disarms dialogs, (3) records errors and runtime
// evidence, and (4) tells Python when the first frame is painted. It never captures pixels:
// Python captures from an isolated world the sketch cannot reach.
(function () {
  "use strict";
  const SEED = __WC_SEED__;
  const NONCE = "__WC_NONCE__";
  const notify = window["__WC_BINDING__"];
  try { delete window["__WC_BINDING__"]; } catch (e) { /* ignore */ }
  const now = performance.now.bind(performance);
  const apply = Reflect.apply;
  const call = (f, self, ...args) => apply(f, self, args);
  const stringify = JSON.stringify;
  const getContext = HTMLCanvasElement.prototype.getContext;
  const toDataURL = HTMLCanvasElement.prototype.toDataURL;
  const setAttribute = Element.prototype.setAttribute;
  const getByTag = Document.prototype.getElementsByTagName;
  const descriptor = Object.getOwnPropertyDescriptor;
  const isConnected = descriptor(Node.prototype, "isConnected").get;
  const captureStackTrace = Error.captureStackTrace;
  const timeout = window.setTimeout;
  const t0 = now();

  // --- determinism: a seeded generator replaces Math.random before any library loads.
  function sfc32(a, b, c, d) {
    return function () {
      a |= 0; b |= 0; c |= 0; d |= 0;
      const t = (((a + b) | 0) + d) | 0;
      d = (d + 1) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      c = (c + t) | 0;
      return (t >>> 0) / 4294967296;
    };
  }
  const rand = sfc32(0x9e3779b9, SEED | 0, (SEED * 0x85ebca6b) | 0, 0xc2b2ae35 ^ SEED);
  for (let i = 0; i < 16; i++) rand();
  Math.random = rand;
  const getRandomValues = (array) => {
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(rand() * 256);
    return array;
  };
  const hex = (n) => Math.floor(rand() * 16 ** n).toString(16).padStart(n, "0");
  const randomUUID = () =>
    `${hex(8)}-${hex(4)}-4${hex(3)}-${(8 + Math.floor(rand() * 4)).toString(16)}${hex(3)}-${hex(12)}`;
  const pin = (obj, name, value) => {
    try { Object.defineProperty(obj, name, { value, configurable: true, writable: true }); } catch (e) { /* ignore */ }
  };
  const pinGetter = (proto, name, get) => {
    try { if (proto) Object.defineProperty(proto, name, { get, configurable: true }); } catch (e) { /* ignore */ }
  };
  pin(crypto, "getRandomValues", getRandomValues);
  pin(crypto, "randomUUID", randomUUID);
  pinGetter(crypto, "subtle", () => undefined); // key generation is a random source

  // Every clock a sketch can read is a virtual one: it starts at 0 and moves 1/16 ms per
  // reading and one 60 Hz frame per animation frame, so the same code and seed read the same
  // times (a busy-wait on the clock still ends). The harness keeps the real clock for timings.
  let virtual = 0;
  const virtualNow = () => (virtual += 0.0625);
  const FIXED_TIME = 1704067200000; // 2024-01-01T00:00:00Z: the wall clock is not a seed
  pin(performance, "now", virtualNow);
  pin(performance, "timeOrigin", FIXED_TIME);
  for (const name of ["getEntries", "getEntriesByType", "getEntriesByName"]) pin(performance, name, () => []);
  for (const name of ["mark", "measure"]) pin(performance, name, () => undefined);
  pinGetter(performance, "memory", () => ({ jsHeapSizeLimit: 0, totalJSHeapSize: 0, usedJSHeapSize: 0 }));
  pinGetter(window.Event && Event.prototype, "timeStamp", virtualNow);
  pinGetter(window.AnimationTimeline && AnimationTimeline.prototype, "currentTime", virtualNow);
  const requestFrame = window.requestAnimationFrame;
  window.requestAnimationFrame = function (callback) {
    return call(requestFrame, window, () => { virtual += 1000 / 60; callback(virtual); });
  };
  for (const name of ["PerformanceObserver", "requestIdleCallback"]) {
    try { delete window[name]; window[name] = undefined; } catch (e) { /* ignore */ }
  }
  const RealDate = Date;
  const dateNow = () => FIXED_TIME + Math.floor(virtual);
  function FixedDate(...args) {
    if (!new.target) return new RealDate(dateNow()).toString();
    return args.length ? new RealDate(...args) : new RealDate(dateNow());
  }
  FixedDate.prototype = RealDate.prototype;
  FixedDate.now = dateNow;
  FixedDate.UTC = RealDate.UTC;
  FixedDate.parse = RealDate.parse;
  window.Date = FixedDate;

  window.name = ""; // survives same-tab navigations

  // --- no dialogs, no peer connections.
  window.alert = () => undefined;
  window.confirm = () => false;
  window.prompt = () => null;
  window.print = () => undefined;
  window.open = () => null;
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection"]) {
    try { delete window[name]; window[name] = undefined; } catch (e) { /* ignore */ }
  }

  // --- evidence.
  const evidence = {
    errors: [],
    brush_calls: {},
    p5_calls: {},
    n_shapes: 0,
    dom_writes: [],
    navigations: [],
    text_calls: 0,
    raw_2d_calls: {},
    raw_gl_calls: {},
    dynamic_code: 0,
    blocked_apis: [],
    tampering: [],
  };
  // Workers are another realm with their own clocks and random sources: refused and listed.
  for (const name of ["Worker", "SharedWorker"]) {
    const refused = function () {
      if (evidence.blocked_apis.length < 10) evidence.blocked_apis.push(`new ${name}`);
      throw new TypeError(`${name} is not available to a sketch`);
    };
    try { window[name] = refused; } catch (e) { /* ignore */ }
  }
  function recordError(message, where) {
    if (evidence.errors.length < 10) evidence.errors.push({ message: String(message).slice(0, 1000), where });
    if (where !== "console") scheduleFinish("error");
  }
  window.addEventListener("error", (e) => {
    const where = `${String(e.filename || "").split("/").pop()}:${e.lineno}:${e.colno}`;
    const stack = e.error && e.error.stack ? String(e.error.stack) : String(e.message);
    recordError(stack.includes("sketch.js:") ? stack : `${stack}\n    at ${where}`, "error");
  });
  window.addEventListener("unhandledrejection", (e) => {
    const r = e.reason;
    recordError(r && r.stack ? String(r.stack) : String(r), "rejection");
  });

  // Leaving the page would lose the painting: cancel every navigation the page starts.
  if (window.navigation && navigation.addEventListener) {
    navigation.addEventListener("navigate", (event) => {
      if (evidence.navigations.length < 10) evidence.navigations.push(String(event.destination.url).slice(0, 300));
      if (event.cancelable) event.preventDefault();
    });
  }

  const state = { inst: null, finishing: false, loaded: false, drawStarted: null, setupStarted: null, setupDone: null, reason: null };
  let brushDepth = 0;

  function instance() { return window.p5 && window.p5.instance; }

  function flushBrush(inst) {
    // p5.brush blends its buffer in its own post-setup/post-draw hooks; after an error those
    // hooks did not run, so run them here to show what was painted before the error.
    if (!inst || !window.p5) return;
    for (const hook of window.p5.lifecycleHooks.postdraw) {
      if (hook === postdrawHook) continue;
      try { brushDepth++; call(hook, inst); } catch (e) { /* nothing to flush */ } finally { brushDepth--; }
    }
  }

  function scheduleFinish(reason) {
    if (state.finishing) return;
    state.finishing = true;
    state.reason = reason;
    call(timeout, window, finish, 0);
  }

  // The picture is read here, synchronously, in the same task that stops the sketch: no
  // timer, frame or observer of the sketch's can run between the last paint and the capture.
  function finish() {
    const inst = state.inst || instance();
    const tDraw = now();
    state.harness = true;
    if (inst) {
      try { inst.noLoop(); } catch (e) { /* ignore */ }
      if (state.reason === "error") flushBrush(inst);
    }
    let canvas = null;
    try { canvas = inst && (inst.canvas || (inst._renderer && inst._renderer.elt)); } catch (e) { canvas = null; }
    let gpu = 0;
    let capture = { error: "no p5 canvas to capture" };
    if (canvas && !call(isConnected, canvas)) {
      capture = { error: "the p5 canvas is not in the page" };
      canvas = null;
    }
    if (canvas) {
      try {
        call(setAttribute, canvas, "data-wc-main", NONCE);
        const gl = call(getContext, canvas, "webgl2") || call(getContext, canvas, "webgl");
        if (gl) {
          const g0 = now();
          gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
          gpu = now() - g0;
        }
        capture = { url: call(toDataURL, canvas, "image/png") };
      } catch (e) {
        capture = { error: String(e) };
      }
    }
    checkTampering();
    const start = state.setupStarted === null ? now() : state.setupStarted;
    const payload = {
      reason: state.reason,
      has_canvas: !!canvas,
      canvas_count: call(getByTag, document, "canvas").length,
      webgl: !!(inst && inst._renderer && inst._renderer.isP3D),
      evidence,
      capture,
      timings: {
        load_s: (start - t0) / 1000,
        setup_s: state.setupDone === null ? (tDraw - start) / 1000 : (state.setupDone - start) / 1000,
        draw_s: state.setupDone === null ? 0 : (tDraw - state.setupDone) / 1000,
        sketch_s: (tDraw - start) / 1000,
        gpu_s: gpu / 1000,
        capture_s: (now() - tDraw) / 1000 - gpu / 1000,
      },
    };
    try { notify(NONCE, call(stringify, JSON, payload)); } catch (e) { /* Python times out */ }
  }

  // --- runtime evidence: brush calls, filled shapes, bare p5 drawing calls.
  const P5_PRIMITIVES = [
    "ellipse", "circle", "rect", "square", "line", "triangle", "quad", "arc", "point",
    "curve", "bezier", "beginShape", "vertex", "endShape", "bezierVertex", "curveVertex",
    "quadraticVertex", "splineVertex", "image", "text", "plane", "box", "sphere", "cylinder",
    "cone", "ellipsoid", "torus", "model", "set", "updatePixels", "copy", "blend", "filter",
  ];
  const FILL_SHAPES = new Set(["endShape", "circle", "rect", "polygon"]);
  let brushFill = false;
  const brushFillStack = [];

  function wrapBrush(brush) {
    for (const name of Object.keys(brush)) {
      const original = brush[name];
      if (typeof original !== "function" || /^[A-Z]/.test(name)) continue;
      brush[name] = function (...args) {
        if (brushDepth === 0) {
          evidence.brush_calls[name] = (evidence.brush_calls[name] || 0) + 1;
          if (name === "fill") brushFill = true;
          else if (name === "noFill") brushFill = false;
          else if (FILL_SHAPES.has(name) && brushFill) evidence.n_shapes++;
        }
        brushDepth++;
        try { return call(original, this, ...args); } finally { brushDepth--; }
      };
      brushWrappers.push([brush, name, brush[name]]);
    }
    brushWrappers.push([window, "brush", brush]);
  }

  function wrapP5(proto) {
    for (const name of P5_PRIMITIVES) {
      const original = proto[name];
      if (typeof original !== "function") continue;
      proto[name] = function (...args) {
        if (brushDepth === 0 && state.setupStarted !== null) {
          evidence.p5_calls[name] = (evidence.p5_calls[name] || 0) + 1;
        }
        // p5's own internal draws for this call are not counted a second time.
        brushDepth++;
        try { return call(original, this, ...args); } finally { brushDepth--; }
      };
    }
    const push = proto.push, pop = proto.pop;
    proto.push = function (...a) { brushFillStack.push(brushFill); return call(push, this, ...a); };
    proto.pop = function (...a) {
      if (brushFillStack.length) brushFill = brushFillStack.pop();
      return call(pop, this, ...a);
    };
  }

  // Drawing that bypasses both libraries: text and raw canvas calls made by the sketch itself.
  function countOn(proto, names, record) {
    if (!proto) return;
    for (const name of names) {
      const original = proto[name];
      if (typeof original !== "function") continue;
      proto[name] = function (...args) {
        if (brushDepth === 0 && state.setupStarted !== null) record(name);
        return call(original, this, ...args);
      };
    }
  }
  const RAW_2D = ["fillRect", "strokeRect", "fill", "stroke", "drawImage", "putImageData"];
  for (const proto of [window.CanvasRenderingContext2D, window.OffscreenCanvasRenderingContext2D]) {
    if (!proto) continue;
    countOn(proto.prototype, ["fillText", "strokeText"], () => { evidence.text_calls++; });
    countOn(proto.prototype, RAW_2D, (name) => {
      evidence.raw_2d_calls[name] = (evidence.raw_2d_calls[name] || 0) + 1;
    });
  }
  // Raw WebGL on any canvas is a second way to put pixels on the page: legitimate only when
  // p5 or p5.brush makes the call. The caller is read from the stack: the nearest script frame
  // must be one of the libraries; the sketch's own frame, or none (a timer or callback handed
  // the bound function over), is evidence of painting past the library.
  const RAW_GL = [
    "clear", "clearBufferfv", "clearBufferiv", "clearBufferuiv", "clearBufferfi", "scissor",
    "drawArrays", "drawElements", "drawArraysInstanced", "drawElementsInstanced",
    "drawRangeElements", "texImage2D", "texSubImage2D", "texImage3D", "texSubImage3D",
    "copyTexImage2D", "copyTexSubImage2D", "compressedTexImage2D", "readPixels",
    "blitFramebuffer", "colorMask", "viewport", "bufferData", "bufferSubData", "shaderSource",
  ];
  const LIB_MARK = "/__wc/lib/";
  const indexOf = String.prototype.indexOf;
  const split = String.prototype.split;
  function calledByLibrary(wrapper) {
    if (Error.prepareStackTrace !== undefined) return false;
    const holder = {};
    const limit = Error.stackTraceLimit;
    try { Error.stackTraceLimit = 16; } catch (e) { /* a locked limit reads as below */ }
    try { call(captureStackTrace, Error, holder, wrapper); } catch (e) { return false; }
    try { Error.stackTraceLimit = limit; } catch (e) { /* ignore */ }
    const lines = call(split, String(holder.stack || ""), "\n");
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      if (call(indexOf, line, LIB_MARK) >= 0) return true;
      if (call(indexOf, line, "https://") >= 0 || call(indexOf, line, "eval at") >= 0) return false;
    }
    return false;
  }
  const glWrappers = [];
  for (const proto of [window.WebGLRenderingContext, window.WebGL2RenderingContext]) {
    if (!proto) continue;
    for (const name of RAW_GL) {
      const original = proto.prototype[name];
      if (typeof original !== "function") continue;
      const wrapper = function (...args) {
        if (!state.harness && brushDepth === 0 && !calledByLibrary(wrapper)) {
          evidence.raw_gl_calls[name] = (evidence.raw_gl_calls[name] || 0) + 1;
        }
        return apply(original, this, args);
      };
      proto.prototype[name] = wrapper;
      glWrappers.push([proto.prototype, name, wrapper]);
    }
  }

  const realEval = window.eval;
  window.eval = function (code) { evidence.dynamic_code++; return realEval(code); };
  const RealFunction = Function;
  const CountedFunction = function (...args) { evidence.dynamic_code++; return RealFunction(...args); };
  CountedFunction.prototype = RealFunction.prototype;
  try { Object.defineProperty(RealFunction.prototype, "constructor", { value: CountedFunction }); } catch (e) { /* ignore */ }
  window.Function = CountedFunction;

  // What the harness relies on must still be in place when the sketch ends: a sketch that
  // swapped a primitive could have hidden its evidence or forged the capture.
  const pinned = [
    [Reflect, "apply", apply], [JSON, "stringify", stringify],
    [Function.prototype, "call", Function.prototype.call],
    [Function.prototype, "apply", Function.prototype.apply],
    [Function.prototype, "bind", Function.prototype.bind],
    [Array.prototype, "push", Array.prototype.push],
    [Array.prototype, Symbol.iterator, Array.prototype[Symbol.iterator]],
    [String.prototype, "indexOf", indexOf], [String.prototype, "split", split],
    [Error, "captureStackTrace", captureStackTrace],
    [HTMLCanvasElement.prototype, "toDataURL", toDataURL],
    [HTMLCanvasElement.prototype, "getContext", getContext],
    [Math, "random", rand], [performance, "now", virtualNow], [window, "Date", FixedDate],
    [crypto, "getRandomValues", getRandomValues], [crypto, "randomUUID", randomUUID],
    [window, "setTimeout", timeout], [window, "requestAnimationFrame", window.requestAnimationFrame],
    [window, "eval", window.eval], [window, "Function", window.Function],
    ...glWrappers,
  ];
  const brushWrappers = [];
  function checkTampering() {
    const changed = [];
    for (const [owner, name, value] of [...pinned, ...brushWrappers]) {
      let now_ = null;
      try { now_ = owner[name]; } catch (e) { now_ = null; }
      if (now_ !== value) changed.push(String(name));
    }
    if (Error.prepareStackTrace !== undefined) changed.push("Error.prepareStackTrace");
    for (const name of changed.slice(0, 10)) evidence.tampering.push(name);
  }

  let postdrawHook = null;
  window.__wcInstallAddon = function () {
    delete window.__wcInstallAddon;
    const P5 = window.p5;
    if (!P5 || typeof P5.registerAddon !== "function") { recordError("p5 did not load", "harness"); return; }
    // Library-internal hooks (p5.brush blending) must not count as the sketch's own calls.
    for (const name of Object.keys(P5.lifecycleHooks)) {
      P5.lifecycleHooks[name] = P5.lifecycleHooks[name].map((hook) => function (...a) {
        brushDepth++;
        try { return call(hook, this, ...a); } finally { brushDepth--; }
      });
    }
    if (window.brush) wrapBrush(window.brush);
    wrapP5(P5.prototype);
    observer.observe(document, { childList: true, subtree: true });
    P5.registerAddon(function (p5, fn, lifecycles) {
      lifecycles.presetup = function () {
        state.inst = this;
        state.setupStarted = now();
        this.randomSeed(SEED);
        this.noiseSeed(SEED);
      };
      lifecycles.postsetup = function () {
        state.setupDone = now();
        const ctx = window;
        if (typeof ctx.draw !== "function") { try { this.noLoop(); } catch (e) { /* ignore */ } scheduleFinish("setup"); }
      };
      postdrawHook = function () {
        try { this.noLoop(); } catch (e) { /* ignore */ }
        scheduleFinish("draw");
      };
      lifecycles.postdraw = postdrawHook;
    });
  };

  // A sketch with neither setup() nor draw() never starts p5: finish on load.
  window.addEventListener("load", () => {
    state.loaded = true;
    setTimeout(() => {
      if (!instance() && !state.finishing) {
        recordError("the sketch defines neither setup() nor draw(), so p5 never started", "harness");
      }
    }, 0);
  });

  // DOM writes other than p5's own canvas and loading spinner are evidence of overlays/text.
  function isP5Own(node) {
    if (node.nodeType !== 1) return false;
    const tag = node.nodeName.toLowerCase();
    if (tag === "canvas") return node.classList.contains("p5Canvas");
    if (tag === "main" || tag === "body") return true;
    if (tag === "script") return node.getAttribute("src") === "/__wc/sketch.js";
    if (tag === "style") return node.id === "p5-loading-style";
    if (tag === "div") return node.classList.contains("loading-indicator") || node.ariaHidden === "true";
    return false;
  }
  const observer = new MutationObserver((records) => {
    for (const r of records) {
      for (const node of r.addedNodes) {
        if (evidence.dom_writes.length >= 20) return;
        if (node.nodeType === 3 && !node.textContent.trim()) continue;
        if (node.nodeType === 3 && r.target.nodeName === "STYLE") continue;
        if (isP5Own(node)) continue;
        evidence.dom_writes.push(node.nodeType === 3 ? "#text" : node.nodeName.toLowerCase());
      }
    }
  });
  const me = document.currentScript;
  if (me) me.remove();
})();

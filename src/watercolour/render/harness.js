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
  const call = (f, self, ...args) => Reflect.apply(f, self, args);
  const getContext = HTMLCanvasElement.prototype.getContext;
  const setAttribute = Element.prototype.setAttribute;
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
  try { Object.defineProperty(crypto, "getRandomValues", { value: getRandomValues }); } catch (e) { /* ignore */ }
  const FIXED_TIME = 1704067200000; // 2024-01-01T00:00:00Z: the wall clock is not a seed
  const RealDate = Date;
  function FixedDate(...args) {
    if (!new.target) return new RealDate(FIXED_TIME).toString();
    return args.length ? new RealDate(...args) : new RealDate(FIXED_TIME);
  }
  FixedDate.prototype = RealDate.prototype;
  FixedDate.now = () => FIXED_TIME;
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
    gl_draw_calls: 0,
    dynamic_code: 0,
  };
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

  const state = { finishing: false, loaded: false, drawStarted: null, setupStarted: null, setupDone: null, reason: null };
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
    setTimeout(finish, 0);
  }

  function finish() {
    const inst = instance();
    const tDraw = now();
    if (inst) {
      try { inst.noLoop(); } catch (e) { /* ignore */ }
      if (state.reason === "error") flushBrush(inst);
    }
    let canvas = null;
    try { canvas = inst && (inst.canvas || (inst._renderer && inst._renderer.elt)); } catch (e) { canvas = null; }
    let gpu = 0;
    if (canvas) {
      try {
        call(setAttribute, canvas, "data-wc-main", NONCE);
        const gl = call(getContext, canvas, "webgl2") || call(getContext, canvas, "webgl");
        if (gl) {
          const g0 = now();
          gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
          gpu = now() - g0;
        }
      } catch (e) { /* capture reports what it finds */ }
    }
    const start = state.setupStarted === null ? now() : state.setupStarted;
    const payload = {
      reason: state.reason,
      has_canvas: !!canvas,
      canvas_count: document.getElementsByTagName("canvas").length,
      webgl: !!(inst && inst._renderer && inst._renderer.isP3D),
      evidence,
      timings: {
        load_s: (start - t0) / 1000,
        setup_s: state.setupDone === null ? (tDraw - start) / 1000 : (state.setupDone - start) / 1000,
        draw_s: state.setupDone === null ? 0 : (tDraw - state.setupDone) / 1000,
        sketch_s: (tDraw - start) / 1000,
        gpu_s: gpu / 1000,
      },
    };
    try { notify(NONCE, JSON.stringify(payload)); } catch (e) { /* Python times out */ }
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
    }
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
  for (const proto of [window.WebGLRenderingContext, window.WebGL2RenderingContext]) {
    if (!proto) continue;
    countOn(proto.prototype, ["drawArrays", "drawElements", "drawArraysInstanced", "drawElementsInstanced"],
      () => { evidence.gl_draw_calls++; });
  }
  const realEval = window.eval;
  window.eval = function (code) { evidence.dynamic_code++; return realEval(code); };
  const RealFunction = Function;
  const CountedFunction = function (...args) { evidence.dynamic_code++; return RealFunction(...args); };
  CountedFunction.prototype = RealFunction.prototype;
  try { Object.defineProperty(RealFunction.prototype, "constructor", { value: CountedFunction }); } catch (e) { /* ignore */ }
  window.Function = CountedFunction;

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

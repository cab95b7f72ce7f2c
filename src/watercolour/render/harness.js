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
  const interval = window.setInterval;
  const isArray = Array.isArray;
  const isView = ArrayBuffer.isView;
  const getPrototypeOf = Object.getPrototypeOf;
  const keysOf = Object.keys;
  const defineProperty = Object.defineProperty;
  const ownKeys = Reflect.ownKeys;
  const construct = Reflect.construct;
  const createObject = Object.create;
  const TO_PRIMITIVE = Symbol.toPrimitive;
  // Appends without Array.prototype.push or an index setter a sketch may have planted.
  const append = (list, value) => {
    defineProperty(list, list.length, { value, writable: true, enumerable: true, configurable: true });
  };
  // Evidence tables have no prototype: no getter or setter a sketch plants on
  // Object.prototype can swallow a count.
  const table = () => createObject(null);
  const weakHas = WeakSet.prototype.has;
  const weakAdd = WeakSet.prototype.add;
  const setHas = Set.prototype.has;
  const fnToString = Function.prototype.toString;
  const toText = String;
  const regexTest = RegExp.prototype.test;
  const toLower = String.prototype.toLowerCase;
  const indexOfBoot = String.prototype.indexOf;
  const PAGE = String(location.href);
  const LIB_PREFIX = String(location.origin) + "/__wc/lib/";
  const t0 = now();

  // --- who called: V8's structured stack (CallSite objects), read with the harness's own copy
  // of its methods. The hooks V8 reads are made own, non-configurable data properties of Error,
  // so no getter a sketch defines (on Error or up its prototype chain) can run while a stack is
  // formatted; a sketch that writes either one is caught (the reading fails closed) and listed.
  const sitesOf = (holder, sites) => sites;
  try {
    defineProperty(Error, "prepareStackTrace", { value: undefined, writable: true, configurable: false });
    defineProperty(Error, "stackTraceLimit", { value: 10, writable: true, configurable: false });
  } catch (e) { /* read as tampered below */ }
  function captureSites(fn, limit) {
    if (Error.prepareStackTrace !== undefined) return null;
    const holder = {};
    let sites = null;
    try {
      Error.stackTraceLimit = limit;
      Error.prepareStackTrace = sitesOf;
      apply(captureStackTrace, Error, [holder, fn]);
      sites = holder.stack;
    } catch (e) {
      sites = null;
    } finally {
      try { Error.prepareStackTrace = undefined; } catch (e) { sites = null; }
      try { Error.stackTraceLimit = 10; } catch (e) { /* ignore */ }
    }
    return isArray(sites) ? sites : null;
  }
  const bootSites = captureSites(undefined, 2);
  const siteProto = bootSites && bootSites.length ? getPrototypeOf(bootSites[0]) : null;
  const siteFile = siteProto && siteProto.getFileName;
  const siteLine = siteProto && siteProto.getLineNumber;
  const siteEval = siteProto && siteProto.isEval;
  const NATIVE = 0, LIBRARY = 1, HARNESS = 2, SKETCH = 3;
  // A frame is the library's when its script is one of the vendored files, the harness's when
  // it is this inline script (the page's own URL), native when it has no source position, and
  // the sketch's otherwise (its file, eval, Function, a timer's string, anything else).
  function frameKind(site) {
    if (apply(siteEval, site, [])) return SKETCH;
    const file = apply(siteFile, site, []);
    if (typeof file !== "string" || file === "") return apply(siteLine, site, []) == null ? NATIVE : SKETCH;
    if (file === PAGE) return HARNESS;
    return apply(indexOfBoot, file, [LIB_PREFIX]) === 0 ? LIBRARY : SKETCH;
  }

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
    brush_calls: table(),
    p5_calls: table(),
    n_shapes: 0,
    dom_writes: [],
    navigations: [],
    text_calls: 0,
    raw_2d_calls: table(),
    raw_gl_calls: table(),
    dynamic_code: 0,
    blocked_apis: [],
    tampering: [],
    raw_access: table(),
  };
  function bump(table, name) { table[name] = (table[name] || 0) + 1; }
  // Workers are another realm with their own clocks and random sources: refused and listed.
  for (const name of ["Worker", "SharedWorker"]) {
    const refused = function () {
      if (evidence.blocked_apis.length < 10) append(evidence.blocked_apis, `new ${name}`);
      throw new TypeError(`${name} is not available to a sketch`);
    };
    try { window[name] = refused; } catch (e) { /* ignore */ }
  }
  function recordError(message, where) {
    if (evidence.errors.length < 10) append(evidence.errors, { message: String(message).slice(0, 1000), where });
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
      if (evidence.navigations.length < 10) append(evidence.navigations, String(event.destination.url).slice(0, 300));
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
    try { notify(NONCE, serialise(payload, 0)); } catch (e) { /* Python times out */ }
  }

  // The report is written by hand, JSON.stringify only ever seeing primitives: a toJSON a
  // sketch planted on Object.prototype or Array.prototype cannot rewrite it.
  function serialise(value, level) {
    if (value === null || value === undefined || level > 6) return "null";
    const type = typeof value;
    if (type === "number") return value === value && value !== Infinity && value !== -Infinity ? apply(stringify, JSON, [value]) : "null";
    if (type === "string" || type === "boolean") return apply(stringify, JSON, [value]);
    if (type !== "object") return "null";
    let out = "";
    if (isArray(value)) {
      for (let i = 0; i < value.length; i++) out += (i ? "," : "") + serialise(value[i], level + 1);
      return "[" + out + "]";
    }
    const names = keysOf(value);
    for (let i = 0; i < names.length; i++) {
      out += (i ? "," : "") + apply(stringify, JSON, [names[i]]) + ":" + serialise(value[names[i]], level + 1);
    }
    return "{" + out + "}";
  }

  // --- runtime evidence: brush calls, filled shapes, bare p5 drawing calls.
  //
  // What counts is who drew. `brushDepth` > 0 while a library does work the harness handed it
  // (a brush method, a p5 primitive's own internals, a lifecycle hook); the library's own calls
  // in that window are not the sketch's. But a sketch can get its own code run inside that
  // window (an argument's valueOf/toString/Symbol.toPrimitive, a getter, a Proxy, a callback,
  // a replaced built-in the library calls), so:
  //  - every brush method's arguments are made inert data before the library sees them,
  //    in the sketch's own window (depth 0): whatever their coercion runs is counted as the
  //    sketch's, and a brush call made from there is the sketch's own (the allowlist applies);
  //    a function argument (a custom tip, a field) runs at depth 0 too, its result made inert;
  //  - every call through the `brush` object is counted: p5.brush never calls its own exports;
  //  - a p5 primitive called inside the window is the sketch's if a frame of the sketch sits
  //    between it and the harness wrapper that opened the window; a raw WebGL call is the
  //    sketch's unless its nearest script frame is a library; a raw 2D call is the sketch's
  //    unless it draws on a context a library created.
  const P5_PRIMITIVES = [
    "ellipse", "circle", "rect", "square", "line", "triangle", "quad", "arc", "point",
    "curve", "bezier", "beginShape", "vertex", "endShape", "bezierVertex", "curveVertex",
    "quadraticVertex", "splineVertex", "image", "text", "plane", "box", "sphere", "cylinder",
    "cone", "ellipsoid", "torus", "model", "set", "updatePixels", "copy", "blend", "filter",
    "beginContour", "endContour", "createGraphics", "createImage", "createFramebuffer",
    "createShader", "createFilterShader", "shader", "texture",
  ];
  const FILL_SHAPES = new Set(["endShape", "circle", "rect", "polygon"]);
  let brushFill = false;
  const brushFillStack = [];
  const brushWrappers = [];
  const libraryContexts = new WeakSet();
  const MAX_ITEMS = 1 << 20;
  const MAX_NESTING = 8;
  const boxed = [Number.prototype.valueOf, String.prototype.valueOf, Boolean.prototype.valueOf];
  const keepAsIs = [];
  const ObjectProto = Object.prototype;
  const objectValueOf = ObjectProto.valueOf, objectToString = ObjectProto.toString;

  // Is the nearest script frame a library's (p5 or p5.brush)? (The built-ins a library calls
  // are kept as they were, below, so a swapped one cannot make a library the caller.)
  function calledByLibrary(fn) {
    for (const limit of [2, 16]) {
      const sites = captureSites(fn, limit);
      if (sites === null) return false;
      for (let i = 0; i < sites.length; i++) {
        const kind = frameKind(sites[i]);
        if (kind === NATIVE) continue;
        return kind === LIBRARY;
      }
      if (sites.length < limit) break;
    }
    return false; // no script frame: a timer or callback handed the bound function over
  }
  // Inside a library's window: is there a frame of the sketch between this call and the
  // harness wrapper that opened the window? (Fails closed: no answer counts as the sketch's.)
  function sketchInside(fn) {
    for (const limit of [24, 64]) {
      const sites = captureSites(fn, limit);
      if (sites === null) return true;
      for (let i = 0; i < sites.length; i++) {
        const kind = frameKind(sites[i]);
        if (kind === NATIVE || kind === LIBRARY) continue;
        return kind !== HARNESS;
      }
      if (sites.length < limit) break;
    }
    return true;
  }

  // Inert data: primitives as they are; arrays (typed arrays, Proxies of arrays) copied item
  // by item; plain objects (option bags) copied key by key; boxed primitives unboxed; p5
  // colours, p5 instances and p5.brush's own objects kept; functions wrapped to run in the
  // sketch's window; any other object (one with a valueOf, toString or Symbol.toPrimitive of
  // its own, a Proxy, a class instance) coerced to a primitive here, once, as an operator
  // would. All of it runs at depth 0, so whatever a coercion draws is the sketch's.
  function inert(value, level) {
    const type = typeof value;
    if (type === "function") return sketchCallback(value);
    if (value === null || type !== "object") return value;
    if (level > MAX_NESTING) return undefined;
    if (isArray(value) || isView(value)) {
      let n = value.length;
      n = typeof n === "number" && n > 0 ? (n > MAX_ITEMS ? MAX_ITEMS : n | 0) : 0;
      const out = new Array(n);
      for (let i = 0; i < n; i++) out[i] = inert(value[i], level + 1);
      return out;
    }
    const proto = getPrototypeOf(value);
    for (let i = 0; i < keepAsIs.length; i++) if (proto === keepAsIs[i]) return value;
    if (proto === ObjectProto || proto === null) {
      if (coercible(value)) return toPrimitive(value);
      const out = {};
      const names = keysOf(value);
      for (let i = 0; i < names.length && i < MAX_ITEMS; i++) {
        const key = names[i];
        defineProperty(out, key, { value: inert(value[key], level + 1), writable: true, enumerable: true, configurable: true });
      }
      return out;
    }
    for (let i = 0; i < boxed.length; i++) {
      try { return apply(boxed[i], value, []); } catch (e) { /* not this box */ }
    }
    return toPrimitive(value);
  }
  // An object with a coercion of its own is a number or string in disguise: coerced now.
  function coercible(value) {
    const exotic = value[TO_PRIMITIVE];
    if (exotic !== undefined && exotic !== null) return true;
    const valueOf = value.valueOf, toString = value.toString;
    return (valueOf !== undefined && valueOf !== objectValueOf) || (toString !== undefined && toString !== objectToString);
  }
  function toPrimitive(value) {
    const exotic = value[TO_PRIMITIVE];
    if (exotic !== undefined && exotic !== null) {
      const result = apply(exotic, value, ["default"]);
      if (result === null || (typeof result !== "object" && typeof result !== "function")) return result;
      throw new TypeError("Cannot convert object to primitive value");
    }
    for (const method of ["valueOf", "toString"]) {
      const f = value[method];
      if (typeof f !== "function") continue;
      const result = apply(f, value, []);
      if (result === null || (typeof result !== "object" && typeof result !== "function")) return result;
    }
    throw new TypeError("Cannot convert object to primitive value");
  }
  // A sketch function the library calls back (a custom tip, a field): the sketch's own window.
  function sketchCallback(f) {
    const wrapped = function (...a) {
      const saved = brushDepth;
      brushDepth = 0;
      try {
        const result = new.target ? construct(f, a, new.target) : apply(f, this, a);
        return inert(result, 0);
      } finally {
        brushDepth = saved;
        checkCore();
      }
    };
    return wrapped;
  }
  function inertArgs(args) {
    const saved = brushDepth;
    brushDepth = 0; // coercion is the sketch's own code: counted as such
    try {
      const out = new Array(args.length);
      for (let i = 0; i < args.length; i++) out[i] = inert(args[i], 0);
      return out;
    } finally {
      brushDepth = saved;
    }
  }
  function countBrush(name) {
    bump(evidence.brush_calls, name);
    if (name === "fill") brushFill = true;
    else if (name === "noFill") brushFill = false;
    else if (apply(setHas, FILL_SHAPES, [name]) && brushFill) evidence.n_shapes++;
  }

  function wrapBrush(brush) {
    for (const name of Object.keys(brush)) {
      const original = brush[name];
      if (typeof original !== "function") continue;
      if (/^[A-Z]/.test(name)) { wrapBrushClass(brush, name, original); continue; }
      brush[name] = function (...args) {
        countBrush(name);
        const clean = inertArgs(args);
        checkCore(name);
        brushDepth++;
        try { return apply(original, brush, clean); } finally { brushDepth--; }
      };
      append(brushWrappers, [brush, name, brush[name]]);
    }
    append(brushWrappers, [window, "brush", brush]);
  }

  // p5.brush's classes (Plot, Polygon, Position): constructing one, or calling one of the
  // methods that paint (show, draw, fill, hatch) from the sketch's window, is a brush call
  // like any other ("Polygon", "Plot.show"). The library reaches them through its own
  // bindings, never the export; its own calls of those methods (inside its window) pass.
  const CLASS_PAINTING = ["show", "draw", "fill", "hatch"];
  function wrapBrushClass(brush, name, Class) {
    const proto = Class.prototype;
    if (!proto) return;
    for (const method of CLASS_PAINTING) {
      const d = descriptor(proto, method);
      if (!d || typeof d.value !== "function") continue;
      const original = d.value;
      const label = `${name}.${method}`;
      const wrapper = function (...args) {
        if (brushDepth !== 0) return apply(original, this, args);
        countBrush(label);
        const clean = inertArgs(args);
        checkCore(label);
        brushDepth++;
        try { return apply(original, this, clean); } finally { brushDepth--; }
      };
      proto[method] = wrapper;
      append(brushWrappers, [proto, method, wrapper]);
    }
    append(keepAsIs, proto);
    const exported = new Proxy(Class, {
      construct(target, args, newTarget) {
        countBrush(name);
        const clean = inertArgs(args);
        brushDepth++;
        try { return construct(target, clean, newTarget); } finally { brushDepth--; }
      },
    });
    brush[name] = exported;
    append(brushWrappers, [brush, name, exported]);
  }

  const p5Wrappers = [];
  function wrapP5(proto) {
    for (const name of P5_PRIMITIVES) {
      const original = proto[name];
      if (typeof original !== "function") continue;
      const wrapper = function (...args) {
        if (state.setupStarted !== null && (brushDepth === 0 || sketchInside(wrapper))) {
          bump(evidence.p5_calls, name);
        }
        // p5's own internal draws for this call are not counted a second time.
        brushDepth++;
        try { return apply(original, this, args); } finally { brushDepth--; }
      };
      proto[name] = wrapper;
      p5Wrappers.push([proto, name, wrapper]);
    }
    // p5.brush's own push/pop (its state stack) run as the library's.
    const push = proto.push, pop = proto.pop;
    proto.push = function (...a) {
      brushFillStack.push(brushFill);
      brushDepth++;
      try { return apply(push, this, a); } finally { brushDepth--; }
    };
    proto.pop = function (...a) {
      if (brushFillStack.length) brushFill = brushFillStack.pop();
      brushDepth++;
      try { return apply(pop, this, a); } finally { brushDepth--; }
    };
    p5Wrappers.push([proto, "push", proto.push], [proto, "pop", proto.pop]);
  }

  // Drawing that bypasses both libraries: text and raw canvas calls made by the sketch itself.
  const rawWrappers = [];
  function countOn(proto, names, record) {
    if (!proto) return;
    for (const name of names) {
      const original = proto[name];
      if (typeof original !== "function") continue;
      const wrapper = function (...args) {
        if (state.setupStarted !== null && (brushDepth === 0 || !apply(weakHas, libraryContexts, [this]))) record(name);
        return apply(original, this, args);
      };
      proto[name] = wrapper;
      rawWrappers.push([proto, name, wrapper]);
    }
  }
  const RAW_2D = ["fillRect", "strokeRect", "fill", "stroke", "drawImage", "putImageData"];
  for (const proto of [window.CanvasRenderingContext2D, window.OffscreenCanvasRenderingContext2D]) {
    if (!proto) continue;
    countOn(proto.prototype, ["fillText", "strokeText"], () => { evidence.text_calls++; });
    countOn(proto.prototype, RAW_2D, (name) => { bump(evidence.raw_2d_calls, name); });
  }
  // A context a library asks for is the library's (its 2D drawing is its own); a context the
  // sketch asks for is a raw handle on a canvas, listed as such.
  for (const Canvas of [window.HTMLCanvasElement, window.OffscreenCanvas]) {
    if (!Canvas) continue;
    const original = Canvas.prototype.getContext;
    const wrapper = function (...args) {
      const context = apply(original, this, args);
      if (context && !state.harness) {
        if (calledByLibrary(wrapper)) apply(weakAdd, libraryContexts, [context]);
        else bump(evidence.raw_access, "getContext");
      }
      return context;
    };
    Canvas.prototype.getContext = wrapper;
    rawWrappers.push([Canvas.prototype, "getContext", wrapper]);
  }

  // Raw WebGL on any canvas is a second way to put pixels on the page: legitimate only when
  // p5 or p5.brush makes the call. The caller is read from the stack: the nearest script frame
  // must be one of the libraries; the sketch's own frame, or none (a timer or callback handed
  // the bound function over), is evidence of painting past the library, at any depth.
  const RAW_GL = [
    "clear", "clearBufferfv", "clearBufferiv", "clearBufferuiv", "clearBufferfi", "scissor",
    "drawArrays", "drawElements", "drawArraysInstanced", "drawElementsInstanced",
    "drawRangeElements", "texImage2D", "texSubImage2D", "texImage3D", "texSubImage3D",
    "copyTexImage2D", "copyTexSubImage2D", "compressedTexImage2D", "readPixels",
    "blitFramebuffer", "colorMask", "bufferData", "bufferSubData", "shaderSource",
  ];
  const indexOf = String.prototype.indexOf;
  const split = String.prototype.split;
  const glWrappers = [];
  for (const proto of [window.WebGLRenderingContext, window.WebGL2RenderingContext]) {
    if (!proto) continue;
    for (const name of RAW_GL) {
      const original = proto.prototype[name];
      if (typeof original !== "function") continue;
      const wrapper = function (...args) {
        if (!state.harness && !calledByLibrary(wrapper)) bump(evidence.raw_gl_calls, name);
        return apply(original, this, args);
      };
      proto.prototype[name] = wrapper;
      glWrappers.push([proto.prototype, name, wrapper]);
    }
  }

  // --- dynamic code: eval, every Function constructor, and a timer handed a string.
  const realEval = window.eval;
  window.eval = function (code) { evidence.dynamic_code++; return realEval(code); };
  const RealFunction = Function;
  const CountedFunction = function (...args) { evidence.dynamic_code++; return RealFunction(...args); };
  CountedFunction.prototype = RealFunction.prototype;
  try { defineProperty(RealFunction.prototype, "constructor", { value: CountedFunction }); } catch (e) { /* ignore */ }
  window.Function = CountedFunction;
  const constructors = [];
  for (const make of ["(async function () {})", "(function* () {})", "(async function* () {})"]) {
    let proto = null;
    try { proto = getPrototypeOf(realEval(make)); } catch (e) { proto = null; }
    if (!proto) continue;
    const Real = proto.constructor;
    const Counted = function (...args) { evidence.dynamic_code++; return apply(Real, undefined, args); };
    Counted.prototype = Real.prototype;
    try { defineProperty(proto, "constructor", { value: Counted }); constructors.push([proto, "constructor", Counted]); } catch (e) { /* ignore */ }
  }
  function countedTimer(real) {
    return function (handler, ...rest) {
      if (typeof handler !== "function") evidence.dynamic_code++; // a string is compiled
      return apply(real, window, [handler, ...rest]);
    };
  }
  window.setTimeout = countedTimer(timeout);
  window.setInterval = countedTimer(interval);
  // An event-handler attribute (onclick="...") is code compiled from a string, too.
  for (const [owner, name] of [[Element.prototype, "setAttribute"], [Element.prototype, "setAttributeNS"]]) {
    const original = owner[name];
    const wrapper = function (...args) {
      const attr = toText(args[name === "setAttribute" ? 0 : 1]);
      if (apply(regexTest, /^on/i, [attr])) {
        evidence.dynamic_code++;
        if (evidence.dom_writes.length < 20) append(evidence.dom_writes, `@${apply(toLower, attr, [])}`);
      }
      return apply(original, this, args);
    };
    owner[name] = wrapper;
    rawWrappers.push([owner, name, wrapper]);
  }

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
    [Math, "random", rand], [performance, "now", virtualNow], [window, "Date", FixedDate],
    [crypto, "getRandomValues", getRandomValues], [crypto, "randomUUID", randomUUID],
    [window, "setTimeout", window.setTimeout], [window, "setInterval", window.setInterval],
    [window, "requestAnimationFrame", window.requestAnimationFrame],
    [window, "eval", window.eval], [window, "Function", window.Function],
    ...constructors, ...glWrappers, ...rawWrappers,
  ];
  // The built-ins a library calls while it draws for the sketch (and p5's prototype, from
  // setup on): replacing one with a bound raw call would make the library the caller of the
  // sketch's drawing, and a getter planted where a library looks up a name would run the
  // sketch's code inside the library's call. So, once the libraries have loaded, their
  // function members are compared on every brush call and callback (JavaScript's own by
  // descriptor; the drawing APIs' and p5's, made non-configurable so no getter can replace
  // one, by value; they stay writable, as libraries assign same-named members on their own
  // objects), with the new names on the three prototypes every lookup ends in (a state
  // setter such as vertex only has JavaScript's own compared); everything is compared again,
  // by descriptor, when the sketch ends.
  const builtins = [];
  const NAMESPACES = () => [
    ["Math", Math], ["JSON", JSON], ["Reflect", Reflect], ["Object", Object], ["Array", Array],
    ["Number", Number], ["String", String], ["Symbol", Symbol], ["Promise", Promise],
  ];
  const CORE_PROTOTYPES = 17;
  const PROTOTYPES = () => [
    ...NAMESPACES(),
    ["Object.prototype", Object.prototype], ["Function.prototype", Function.prototype],
    ["Array.prototype", Array.prototype], ["Number.prototype", Number.prototype],
    ["String.prototype", String.prototype], ["Boolean.prototype", Boolean.prototype],
    ["Map.prototype", Map.prototype], ["Set.prototype", Set.prototype],
    ["WeakMap.prototype", WeakMap.prototype], ["Promise.prototype", Promise.prototype],
    ["TypedArray.prototype", getPrototypeOf(Float32Array.prototype)],
    ["Float32Array.prototype", Float32Array.prototype], ["Float64Array.prototype", Float64Array.prototype],
    ["Uint8Array.prototype", Uint8Array.prototype], ["Uint16Array.prototype", Uint16Array.prototype],
    ["Uint32Array.prototype", Uint32Array.prototype], ["Int32Array.prototype", Int32Array.prototype],
    // (CORE_PROTOTYPES ends here: what follows is the browser's drawing APIs)
    ["CanvasRenderingContext2D.prototype", window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype],
    ["Path2D.prototype", window.Path2D && Path2D.prototype],
    ["WebGL2RenderingContext.prototype", window.WebGL2RenderingContext && WebGL2RenderingContext.prototype],
    ["WebGLRenderingContext.prototype", window.WebGLRenderingContext && WebGLRenderingContext.prototype],
  ];
  const watched = []; // [owner, key, value, label]: prototype members compared on brush calls
  let coreWatched = 0; // the first entries: the JavaScript prototypes
  function pinBuiltins(owners, fix) {
    for (const [label, owner] of owners) {
      if (!owner) continue;
      const own = ownKeys(owner);
      append(builtins, [owner, null, own.length, label]);
      for (const key of own) {
        const d = descriptor(owner, key);
        if (!d) continue;
        const fn = typeof d.value === "function";
        if (fn) append(builtins, [owner, key, d.value, label]);
        else if (d.get || d.set) append(builtins, [owner, key, d.get, label, d.set]);
        else continue;
        if (fn) append(watched, [owner, key, d.value, label]);
        if (!fix || !d.configurable) continue;
        try {
          defineProperty(owner, key, fn
            ? { value: d.value, writable: true, enumerable: d.enumerable, configurable: false }
            : { get: d.get, set: d.set, enumerable: d.enumerable, configurable: false });
        } catch (e) { /* compared at the end instead */ }
      }
    }
  }
  const CORE = [Object.prototype, Array.prototype, Function.prototype];
  let coreCounts = null; // taken when the libraries have loaded
  const CORE_LABELS = ["Object.prototype", "Array.prototype", "Function.prototype"];
  // A state setter (vertex, fillBleed, ...) only touches JavaScript's own built-ins; the
  // others reach p5 and the browser's drawing APIs too.
  const SETTERS = new Set(["vertex", "beginShape", "noStroke", "noFill", "noHatch", "noField",
    "noWash", "noMass", "noClip", "fillBleed", "fillTexture", "scaleBrushes", "strokeWeight"]);
  function checkCore(name) {
    if (coreCounts === null) return;
    for (let i = 0; i < CORE.length; i++) {
      if (ownKeys(CORE[i]).length !== coreCounts[i]) report(`${CORE_LABELS[i]} (a new property)`);
    }
    // JavaScript's own built-ins keep their attributes (redefining them would slow every
    // library that calls them): compared by descriptor, so a getter put in place of one is
    // seen and never run. The drawing APIs' members cannot become getters: compared by value.
    for (let i = 0; i < coreWatched; i++) {
      const entry = watched[i];
      const d = descriptor(entry[0], entry[1]);
      if (d === undefined || d.value !== entry[2]) report(`${entry[3]}.${toText(entry[1])}`);
    }
    if (name !== undefined && apply(setHas, SETTERS, [name])) return;
    for (let i = coreWatched; i < watched.length; i++) {
      const entry = watched[i];
      if (entry[0][entry[1]] !== entry[2]) report(`${entry[3]}.${toText(entry[1])}`);
    }
  }
  function builtinsChanged() {
    for (let i = 0; i < builtins.length; i++) {
      const entry = builtins[i];
      const owner = entry[0], key = entry[1];
      if (key === null) {
        if (ownKeys(owner).length !== entry[2]) return entry;
        continue;
      }
      const d = descriptor(owner, key);
      if (!d) return entry;
      if (entry.length === 4 ? d.value !== entry[2] : (d.get !== entry[2] || d.set !== entry[4])) return entry;
    }
    return null;
  }
  const reported = table();
  function report(label) {
    if (!reported[label] && evidence.tampering.length < 10) {
      reported[label] = true;
      append(evidence.tampering, label);
    }
  }
  function checkPins() {
    const entry = builtinsChanged();
    if (entry === null) return;
    report(entry[1] === null ? `${entry[3]} (a new property)` : `${entry[3]}.${String(entry[1])}`);
  }
  function checkTampering() {
    const changed = [];
    const all = [pinned, brushWrappers, p5Wrappers];
    for (let j = 0; j < all.length; j++) for (let i = 0; i < all[j].length; i++) {
      const owner = all[j][i][0], name = all[j][i][1], value = all[j][i][2];
      let now_ = null;
      try { now_ = descriptor(owner, name); now_ = now_ ? now_.value : undefined; } catch (e) { now_ = null; }
      if (now_ !== value) append(changed, String(name));
    }
    if (Error.prepareStackTrace !== undefined) append(changed, "Error.prepareStackTrace");
    for (let i = 0; i < changed.length && i < 10; i++) append(evidence.tampering, changed[i]);
    checkPins();
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
    if (P5.Color && P5.Color.prototype) append(keepAsIs, P5.Color.prototype);
    append(keepAsIs, P5.prototype);
    const owners = PROTOTYPES(), core = NAMESPACES().length + CORE_PROTOTYPES;
    pinBuiltins(owners.slice(0, core), false);
    coreWatched = watched.length;
    pinBuiltins(owners.slice(core), true);
    coreCounts = CORE.map((owner) => ownKeys(owner).length);
    append(pinned, [window, "p5", P5]);
    // An add-on registered by the sketch would run its hooks as p5's own code.
    const registerAddon = P5.registerAddon;
    const addonWrapper = function (...args) {
      if (!calledByLibrary(addonWrapper)) bump(evidence.raw_access, "registerAddon");
      return apply(registerAddon, this, args);
    };
    observer.observe(document, { childList: true, subtree: true });
    P5.registerAddon(function (p5, fn, lifecycles) {
      lifecycles.presetup = function () {
        state.inst = this;
        state.setupStarted = now();
        this.randomSeed(SEED);
        this.noiseSeed(SEED);
        watchSketch(P5, this);
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
    P5.registerAddon = addonWrapper;
    append(pinned, [P5, "registerAddon", addonWrapper]);
  };

  // When setup starts (p5's global names are bound, its prototype decorated): p5's prototype
  // joins the pinned built-ins; reading the raw context through p5's global `drawingContext`
  // is listed as the sketch's raw access; setup and draw must be the sketch's own functions
  // (a bound raw call as draw() would be run by p5 itself).
  function watchSketch(P5, inst) {
    pinBuiltins([["p5.prototype", P5.prototype]], true);
    const d = descriptor(window, "drawingContext");
    if (d && d.get && d.configurable) {
      const get = d.get;
      const getter = function () {
        if (!state.harness && !calledByLibrary(getter)) bump(evidence.raw_access, "drawingContext");
        return apply(get, this, []);
      };
      defineProperty(window, "drawingContext", { get: getter, set: d.set, configurable: true, enumerable: d.enumerable });
    }
    for (const name of ["setup", "draw"]) {
      const f = window[name];
      if (typeof f !== "function") continue;
      let source = "";
      try { source = apply(fnToString, f, []); } catch (e) { source = "[native code]"; }
      if (apply(indexOfBoot, source, ["[native code]"]) >= 0 && evidence.tampering.length < 10) {
        append(evidence.tampering, `${name} is not the sketch's own function`);
      }
    }
  }

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
        append(evidence.dom_writes, node.nodeType === 3 ? "#text" : node.nodeName.toLowerCase());
      }
    }
  });
  const me = document.currentScript;
  if (me) me.remove();
})();

/**
 * What a sandboxed script may define and the prelude that runs before it (sandbox.ts): the entry
 * points, the JSON hand-over and the sandbox's own `console`.
 */

/** A function a script may define and the properties of the call's JSON input handed to it, in order. */
export interface SandboxFunction {
  name: string;
  params: readonly string[];
  /** `input.recvTime` arrives as an ISO string and is handed to the script as a Date (TS013 codecs). */
  recvTimeAsDate?: boolean;
}

/**
 * What a script must define (`name`, or one of `others` marked `entry`) and what else it may define.
 * Constants of the calling module only (they are spliced into the prelude), never user input.
 */
export interface SandboxEntry extends SandboxFunction {
  /** How messages name the script: `parser script`, `filter script`, … */
  label: string;
  others?: ReadonlyArray<SandboxFunction & { entry?: boolean }>;
}

/** Device driver parsers: `parse(bytes, meta)`. */
export const PARSE_ENTRY: SandboxEntry = { name: 'parse', params: ['bytes', 'meta'], label: 'parser script' };

/** `console.*` lines kept per call and characters per line; the rest is counted, not kept. */
export const MAX_LOG_LINES = 100;
export const MAX_LOG_LINE_CHARS = 1000;

export const signature = (f: SandboxFunction) => `${f.name}(${f.params.join(', ')})`;

/**
 * Runs inside the sandbox before the user's code. It keeps its own references to JSON and Object,
 * so a script that replaces JSON.stringify cannot smuggle non-JSON values out, and it hands back
 * only JSON strings. Its hooks are removed from the global object again before the user's code
 * runs. `console` is the sandbox's own: its lines are collected here and handed to the host by
 * `__stellwerkLogs`, bounded per call.
 *
 * Every call starts from the globals the script's top level left, as on a LoRaWAN network server
 * (a fresh runtime per uplink): `__stellwerkDefined`, called once after the script loaded, notes
 * the script's own globals, and each call puts them back afterwards (a top-level `var` the call
 * changed gets its loaded value again, a global the call assigned without `var` is removed). So a
 * codec that keeps a read position in a global does not carry it into the next packet or device.
 * Objects changed in place, top-level `let`/`const` bindings and built-ins are not reset: that
 * would take a new context and re-evaluation per call (measured 10 to 200 times a call).
 * Its own tables have no prototype: a script that adds enumerable properties to Object.prototype
 * (vendor codecs do) does not reach them.
 */
export const prelude = (entry: SandboxEntry) => {
  const functions = [entry, ...(entry.others ?? [])];
  // `typeof name` (not globalThis[name]) also finds functions declared with const/let.
  const table = functions
    .map(
      (f) =>
        `${JSON.stringify(f.name)}: { get: function () { return typeof ${f.name} === 'function' ? ${f.name} : exported(${JSON.stringify(f.name)}); }, ` +
        `params: ${JSON.stringify(f.params)}, date: ${f.recvTimeAsDate === true} }`,
    )
    .join(',\n    ');
  return `(function () {
  var stringify = JSON.stringify, parseJson = JSON.parse, toText = String, DateType = Date;
  var ownKeys = Object.keys, describe = Object.getOwnPropertyDescriptor, define = Object.defineProperty,
    global = globalThis;
  // Vendor codecs written to be tested in Node end with \`module.exports = {decodeUplink}\` or
  // \`exports.decodeUplink = …\`: both exist here, and a function found only there is used.
  var commonJs = { exports: {} };
  global.module = commonJs;
  global.exports = commonJs.exports;
  function exported(name) {
    var holders = [global.module && global.module.exports, global.exports];
    for (var i = 0; i < holders.length; i++) {
      var holder = holders[i];
      if (holder !== null && (typeof holder === 'object' || typeof holder === 'function') &&
          typeof holder[name] === 'function') return holder[name];
    }
    return undefined;
  }
  var functions = {
    __proto__: null,
    ${table}
  };
  // The script's own globals once it loaded (the enumerable ones: its top-level var and function
  // declarations and assignments without var; not the built-ins): names, descriptors (null for
  // accessors, left alone) and a name set.
  var loadedNames = null, loaded = [], loadedSet = { __proto__: null };
  function noteGlobals() {
    loadedNames = ownKeys(global);
    for (var i = 0; i < loadedNames.length; i++) {
      var was = describe(global, loadedNames[i]);
      loaded[i] = 'value' in was ? was : null;
      loadedSet[loadedNames[i]] = true;
    }
  }
  function resetGlobals() {
    if (loadedNames === null) return;
    var created = ownKeys(global), i, was, value, now;
    for (i = 0; i < created.length; i++) if (loadedSet[created[i]] !== true) delete global[created[i]];
    for (i = 0; i < loadedNames.length; i++) {
      was = loaded[i];
      if (was === null) continue;
      value = global[loadedNames[i]];
      if (value === was.value || (value !== value && was.value !== was.value)) continue;
      now = describe(global, loadedNames[i]);
      if (!now || now.configurable) define(global, loadedNames[i], was);
      else if (now.writable) global[loadedNames[i]] = was.value;
    }
  }
  var logs = [], dropped = 0;
  function show(value) {
    if (typeof value === 'string') return value;
    try { var text = stringify(value); if (text !== undefined) return text; } catch (e) {}
    try { return toText(value); } catch (e) { return '[unprintable]'; }
  }
  function logger(prefix) {
    return function () {
      if (logs.length >= ${MAX_LOG_LINES}) { dropped += 1; return; }
      var parts = [];
      for (var i = 0; i < arguments.length; i++) parts.push(show(arguments[i]));
      logs.push((prefix + parts.join(' ')).slice(0, ${MAX_LOG_LINE_CHARS}));
    };
  }
  globalThis.console = { log: logger(''), info: logger(''), debug: logger(''), warn: logger('warn: '), error: logger('error: ') };
  globalThis.__stellwerkLogs = function () {
    var out = logs;
    if (dropped > 0) out.push('… ' + dropped + ' more lines not kept');
    logs = []; dropped = 0;
    return stringify(out);
  };
  globalThis.__stellwerkDefined = function () {
    var names = [];
    for (var name in functions) if (functions[name].get()) names.push(name);
    noteGlobals();
    return stringify(names);
  };
  globalThis.__stellwerkRun = function (name, input) {
    try {
      return run(name, input);
    } finally {
      try { resetGlobals(); } catch (e) {}
    }
  };
  function run(name, input) {
    var spec = functions[name], fn = spec && spec.get();
    if (!fn) throw new TypeError('the script does not define function ' + name);
    var args = parseJson(input);
    if (spec.date && args.input && typeof args.input.recvTime === 'string') args.input.recvTime = new DateType(args.input.recvTime);
    var values = [];
    for (var i = 0; i < spec.params.length; i++) values.push(args[spec.params[i]]);
    var result = fn.apply(undefined, values);
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      throw new TypeError(name + ' must return its values directly, not a Promise');
    }
    try {
      var text = stringify(result, function (key, value) {
        var type = typeof value;
        if (type === 'function' || type === 'symbol' || type === 'bigint' || (type === 'undefined' && key === '')) {
          throw new TypeError(name + ' returned ' + (type === 'undefined' ? 'undefined' : 'a ' + type) +
            (key === '' ? '' : ' at "' + key + '"') + '; only JSON values are allowed');
        }
        return value;
      });
    } catch (error) {
      if (error instanceof TypeError && /circular/i.test(toText(error.message))) {
        throw new TypeError(name + ' returned a cyclic value; only JSON values are allowed');
      }
      throw error;
    }
    return text;
  }
})();`;
};

// convgit's recorder client in the agent's own process (convgit/agents/live/inprocess.py writes
// it into the plugin): an event is handed to the recorder of its working tree over its Unix
// socket, as the hook's thin client hands it (convgit/agents/live/client.py: the same place,
// request, acknowledgement and timeouts), while the agent waits as it waits for a hook's process.
// `hand` returns what the hook would have written on stdout once the recorder recorded the
// event; null whenever it did not (none, stale, another convgit's, too slow, gone): the plugin
// then runs the hook's command, which does the event itself.
import {
  lstatSync as convgitLstat,
  readFileSync as convgitRead,
  realpathSync as convgitReal,
  statSync as convgitStat,
} from "node:fs"
import { Worker as ConvgitWorker } from "node:worker_threads"

@DIRECT@
const CONVGIT_RECORDER = (() => {
  const PACKAGE = @PACKAGE@ // the convgit package folder the command runs (null: another program)
  const ARGS = @ARGS@ // the hook's arguments after `hook`
  const PROTOCOL = @PROTOCOL@
  const HANDSHAKE_MS = @HANDSHAKE_MS@
  const WAIT_MS = @WAIT_MS@ // at most, then the plugin gives up as the thin client does
  const SPACE = 1 << 20 // bytes of the recorder's answer the plugin reads at most
  const uid = typeof process.getuid === "function" ? process.getuid() : -1
  let shared = null
  let worker = null
  // Bun on Linux: the event goes from the agent's own thread (null: through the worker)
  const CONSTS = [HANDSHAKE_MS, WAIT_MS, @BEAT_MS@, @TAKEN@, SPACE]
  const direct = convgitDirect(convgitRead, ...CONSTS)

  const lexists = (path) => {
    try {
      convgitLstat(path)
      return true
    } catch {
      return false
    }
  }
  const join = (folder, name) => (folder.endsWith("/") ? folder + name : folder + "/" + name)
  const dirname = (path) => {
    const cut = path.replace(/\/+$/, "").lastIndexOf("/")
    return cut <= 0 ? "/" : path.slice(0, cut)
  }
  const resolve = (base, path) => {
    const parts = []
    for (const part of (path.startsWith("/") ? path : base + "/" + path).split("/")) {
      if (part === "" || part === ".") continue
      if (part === "..") parts.pop()
      else parts.push(part)
    }
    return "/" + parts.join("/")
  }
  // client.key_of: FNV-1a (64 bits) of the root and the store
  const keyOf = (root, store) => {
    let value = 0xcbf29ce484222325n
    for (const byte of Buffer.from(root + "\0" + store, "utf8")) {
      value = ((value ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn
    }
    return value.toString(16).padStart(16, "0")
  }
  // client.runtime_folder, never made here: without it the hook's command makes it
  const runtimeFolder = () => {
    const runtime = process.env.XDG_RUNTIME_DIR || ""
    let folder = "/tmp/convgit-" + uid
    try {
      if (runtime && convgitStat(runtime).isDirectory()) folder = join(runtime, "convgit")
    } catch {}
    try {
      const info = convgitLstat(folder)
      if (info.uid !== uid || (info.mode & 0o170077) !== 0o040000) return null
    } catch {
      return null
    }
    return folder
  }
  // client.place: the recorder's folder, key and working tree for an event in `cwd`
  const place = (cwd) => {
    const env = process.env
    if (env.GIT_DIR || env.GIT_WORK_TREE) return null
    const here = convgitReal(cwd)
    let root = here
    while (!lexists(root + "/.git")) {
      const parent = dirname(root)
      if (parent === root) return null
      root = parent
    }
    const folder = runtimeFolder()
    if (folder === null) return null
    const named = env.CONVGIT_STORE || ""
    return { here, folder, key: keyOf(root, named ? resolve(here, named) : "") }
  }
  // client.package: the version as the package's __init__.py sets it, and its real folder
  const version = (folder) => {
    const text = convgitRead(folder + "/__init__.py", "utf8")
    const at = text.indexOf('\n__version__ = "')
    if (at < 0) return null
    const rest = text.slice(at + 16)
    return rest.slice(0, rest.indexOf('"'))
  }
  // client.request: the event's request, its environment the hook's process would have
  const request = (here, raw) => {
    const folder = convgitReal(PACKAGE)
    const said = version(folder)
    if (said === null) return null
    const now = BigInt(Date.now())
    const env = Object.entries({ ...process.env, PWD: here }).map(([k, v]) => k + "=" + v)
    const fields = [PROTOCOL, "event", said, folder, here, String(now * 1000000n)]
    fields.push(String((now + BigInt(HANDSHAKE_MS)) * 1000000n), String(ARGS.length), ...ARGS)
    fields.push(String(env.length), ...env)
    return Buffer.from(fields.join("\0") + "\0" + raw, "utf8")
  }
  // what the hook would have written on stdout, from the recorder's answer; null: not recorded
  const said = (answer) => {
    const first = answer.subarray(0, 1).toString()
    if (first === "D") return answer.subarray(1).toString("utf8") // its stdout
    if (first === "E") return "" // said on stderr, which the plugin does not read
    return null
  }
  const start = () => {
    shared = new SharedArrayBuffer(16 + SPACE)
    const consts = { HANDSHAKE_MS, WAIT_MS, BEAT_MS: CONSTS[2], TAKEN: CONSTS[3], SPACE }
    worker = new ConvgitWorker(@WORKER@, { eval: true, workerData: { shared, consts } })
    worker.unref() // the agent exits when it is done, whatever the worker does
    // a worker that fails is never the agent's failure: the next event starts another
    const failed = worker
    failed.on("error", () => {
      if (worker === failed) worker = null
    })
  }
  // a socket there already when the plugin loads: the worker starts beside the agent's start
  try {
    const found = PACKAGE === null || direct !== null ? null : place(process.cwd())
    if (found && convgitLstat(join(found.folder, found.key + ".sock")).isSocket()) start()
  } catch {}

  return {
    // where the recorder of an event in `cwd` listens (null: none can serve it), as the thin
    // client finds it
    where(cwd) {
      try {
        const found = place(cwd)
        return found && { ...found, path: join(found.folder, found.key + ".sock") }
      } catch {
        return null
      }
    },
    hand(cwd, raw) {
      const env = process.env
      // off, or a value the hook refuses in its own words: no recorder is asked
      if (PACKAGE === null || !["", "on"].includes(env.CONVGIT_RECORDER ?? "")) return null
      if (env.CONVGIT_FAULT || env.CONVGIT_HOOK_PROBE) return null
      try {
        const found = this.where(cwd)
        if (found === null) return null
        const path = found.path
        const info = convgitLstat(path)
        if (!info.isSocket() || info.uid !== uid) return null // this user's recorder alone
        const sent = request(found.here, raw)
        if (sent === null) return null
        const answered = direct === null ? undefined : direct(path, found.folder, found.key, sent)
        if (answered !== undefined) return answered === null ? null : said(answered)
        if (worker === null) start()
        const state = new Int32Array(shared, 0, 4)
        Atomics.store(state, 0, 0)
        worker.postMessage({ path, folder: found.folder, key: found.key, sent })
        Atomics.wait(state, 0, 0, WAIT_MS + 5 * HANDSHAKE_MS)
        if (Atomics.load(state, 0) !== 1) return null
        return said(Buffer.from(new Uint8Array(shared, 16, state[2])))
      } catch {
        return null
      }
    },
  }
})()

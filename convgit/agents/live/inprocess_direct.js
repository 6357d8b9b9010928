// convgit's recorder client on the agent's own thread, for Bun on Linux (OpenCode): the event
// goes to the recorder through libc's socket calls (bun:ffi), blocking as a hook's process
// blocks the agent, with no worker thread, whose start in Bun costs the agent more than the
// event itself. It keeps the worker's promises (inprocess_worker.js, as the thin client,
// convgit/agents/live/client.py): connected and the event sent whole within the handshake,
// taken within the handshake (else a stopped recorder is ended), then, while it records,
// looked at every beat: found stopped or past the wait, it is ended and the event is the
// hook's. `exchange` returns the recorder's answer; null when the event is the hook's;
// undefined when libc cannot be reached this way (the worker speaks instead).
const convgitDirect = (read, HANDSHAKE_MS, WAIT_MS, BEAT_MS, TAKEN, SPACE) => {
  if (typeof Bun === "undefined" || process.platform !== "linux") return null
  const { recorder, stopped, end } = convgitRecorderProcess(read, HANDSHAKE_MS)
  const EINTR = 4
  const EAGAIN = 11
  let libc = null // bun:ffi and libc's calls, once the first event needs them
  let absent = false // they could not be loaded: the worker speaks
  const load = () => {
    const ffi = require("bun:ffi") // Bun gives a module `require` as well
    const calls = {
      socket: { args: ["i32", "i32", "i32"], returns: "i32" },
      connect: { args: ["i32", "ptr", "u32"], returns: "i32" },
      setsockopt: { args: ["i32", "i32", "i32", "ptr", "u32"], returns: "i32" },
      write: { args: ["i32", "ptr", "u64"], returns: "i64" },
      read: { args: ["i32", "ptr", "u64"], returns: "i64" },
      poll: { args: ["ptr", "u64", "i32"], returns: "i32" },
      shutdown: { args: ["i32", "i32"], returns: "i32" },
      close: { args: ["i32"], returns: "i32" },
      __errno_location: { args: [], returns: "ptr" },
    }
    const c = ffi.dlopen("libc.so.6", calls).symbols
    return { c, ffi, errno: () => ffi.read.i32(c.__errno_location(), 0) }
  }
  const exchange = (path, folder, key, sent) => {
    if (libc === null) libc = load()
    const { c, ffi, errno } = libc
    const name = Buffer.from(path, "utf8")
    if (name.length > 107) return null // longer than sockaddr_un holds: the hook's
    const fd = c.socket(1, 1 | 0x80000, 0) // AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC
    if (fd < 0) return null
    try {
      const address = Buffer.alloc(110) // sa_family, then the path
      address.writeUInt16LE(1, 0)
      name.copy(address, 2)
      // connect and each write blocks the handshake at most (SO_SNDTIMEO, a struct timeval)
      const limit = new BigInt64Array([BigInt(Math.floor(HANDSHAKE_MS / 1000)), 0n])
      limit[1] = BigInt((HANDSHAKE_MS % 1000) * 1000)
      if (c.setsockopt(fd, 1, 21, limit, 16) !== 0) return null // SOL_SOCKET, SO_SNDTIMEO
      const sending = Date.now() + HANDSHAKE_MS
      if (c.connect(fd, address, address.length) !== 0) return null
      for (let at = 0; at < sent.length; ) {
        const wrote = Number(c.write(fd, ffi.ptr(sent, at), sent.length - at))
        if (wrote > 0) at += wrote
        else if (wrote === 0 || errno() !== EINTR || Date.now() > sending) return null
      }
      c.shutdown(fd, 1) // SHUT_WR: the event is whole
      const last = Date.now() + WAIT_MS + 5 * HANDSHAKE_MS // as long as the worker is waited for
      const space = Buffer.alloc(65536)
      const ready = new Int16Array(4) // struct pollfd: fd (int), events, revents
      const chunks = []
      let size = 0
      let first = true
      let until = Date.now() + HANDSHAKE_MS // to be taken, then to be answered
      let beat = 0 // the next look at a recorder that took the event; 0: it did not
      for (;;) {
        const now = Date.now()
        if (first && now >= until) {
          const pid = recorder(folder, key)
          if (stopped(pid)) end(pid)
          return null
        }
        if (beat > 0 && now >= beat) {
          const pid = recorder(folder, key)
          if (stopped(pid) || now > until) {
            end(pid)
            return null
          }
          beat = now + BEAT_MS
        }
        if (now >= last) return null
        const next = first ? until : beat > 0 ? beat : last
        new Int32Array(ready.buffer, 0, 1)[0] = fd
        ready[2] = 1 // POLLIN
        ready[3] = 0
        const seen = c.poll(ready, 1, Math.max(1, Math.min(next, last) - now))
        if (seen < 0 && errno() !== EINTR) return null
        if (seen <= 0) continue
        const got = Number(c.read(fd, space, space.length))
        if (got < 0) {
          const why = errno()
          if (why === EINTR || why === EAGAIN) continue
          return null
        }
        if (got === 0) return first ? null : Buffer.concat(chunks).subarray(0, SPACE) // the end
        let chunk = Buffer.from(space.subarray(0, got))
        if (first) {
          first = false
          if (chunk[0] === TAKEN) {
            chunk = chunk.subarray(1)
            until = Date.now() + WAIT_MS - HANDSHAKE_MS
            beat = Date.now() + BEAT_MS
          }
        }
        if (size < SPACE) chunks.push(chunk)
        size += chunk.length
      }
    } finally {
      c.close(fd)
    }
  }
  return (path, folder, key, sent) => {
    if (absent) return undefined
    try {
      return exchange(path, folder, key, sent)
    } catch {
      absent = libc === null // no bun:ffi, or no libc.so.6 (musl): the worker, from now on
      return absent ? undefined : null
    }
  }
}

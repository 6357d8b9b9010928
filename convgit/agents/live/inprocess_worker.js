// The thread of convgit's in-process recorder client (convgit/agents/live/inprocess.js) that
// speaks to the recorder while the agent's thread waits for its answer, as the hook's thin
// client does (convgit/agents/live/client.py, `run` and `answered`): connected within the
// handshake, the event sent whole, taken within the handshake (else a stopped recorder is
// ended), then, while it records, looked at every beat: found stopped or past the wait, it is
// ended and the event is the hook's. Its answer is written in the shared buffer; 0 bytes when
// the event is the hook's. Run as a script (node's and Bun's workers give it `require`, which
// starts sooner than an `import`).
@PROCESS@
;(() => {
  const { parentPort, workerData } = require("node:worker_threads")
  const net = require("node:net")
  const fs = require("node:fs")
  const { shared, consts } = workerData
  const state = new Int32Array(shared, 0, 4)

  const report = (answer) => {
    const bytes = answer === null ? new Uint8Array(0) : answer.subarray(0, consts.SPACE)
    new Uint8Array(shared, 16, bytes.length).set(bytes)
    state[2] = bytes.length
    Atomics.store(state, 0, 1)
    Atomics.notify(state, 0)
  }
  const { recorder, stopped, end } = convgitRecorderProcess(fs.readFileSync, consts.HANDSHAKE_MS)
  // a connection to the socket at `path` that sends `sent` whole, then says so (half-closed):
  // node's own sockets, or Bun's (OpenCode runs on Bun, whose node:net closes both ways at end)
  const link = (path, sent, on) => {
    if (typeof Bun === "undefined") {
      const sock = net.createConnection(path)
      sock.on("error", on.error)
      sock.on("connect", () => {
        sock.end(sent)
        on.sent()
      })
      sock.on("data", on.data)
      sock.on("end", on.end)
      sock.on("close", on.end)
      return () => sock.destroy()
    }
    let opened = null
    let rest = sent
    const flush = (sock) => {
      while (rest.length > 0) {
        const wrote = sock.write(rest)
        if (wrote <= 0) return
        rest = rest.subarray(wrote)
      }
      rest = null
      sock.shutdown()
      on.sent()
    }
    Bun.connect({
      unix: path,
      socket: {
        open: (sock) => {
          opened = sock
          flush(sock)
        },
        drain: (sock) => rest !== null && flush(sock),
        data: (_sock, chunk) => on.data(Buffer.from(chunk)),
        end: on.end,
        close: on.end,
        error: on.error,
        connectError: on.error,
      },
    }).catch(on.error)
    return () => opened && opened.terminate()
  }

  parentPort.on("message", ({ path, folder, key, sent }) => {
    let settled = false
    let timer = null
    let beat = null
    let first = true
    let close = () => {}
    const chunks = []
    const done = (answer) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      clearInterval(beat)
      close()
      report(answer)
    }
    try {
      timer = setTimeout(() => done(null), consts.HANDSHAKE_MS) // to connect and send
      close = link(path, Buffer.from(sent), {
        error: () => done(null),
        sent: () => {
          clearTimeout(timer)
          timer = setTimeout(() => {
            const pid = recorder(folder, key)
            if (stopped(pid)) end(pid) // a recorder stopped for good would keep every hook waiting
            done(null)
          }, consts.HANDSHAKE_MS)
        },
        data: (chunk) => {
          if (first) {
            first = false
            clearTimeout(timer)
            if (chunk[0] === consts.TAKEN) {
              chunk = chunk.subarray(1)
              const until = Date.now() + consts.WAIT_MS - consts.HANDSHAKE_MS
              beat = setInterval(() => {
                const pid = recorder(folder, key)
                if (stopped(pid) || Date.now() > until) {
                  end(pid)
                  done(null)
                }
              }, consts.BEAT_MS)
            }
          }
          chunks.push(chunk)
        },
        end: () => done(first ? null : Buffer.concat(chunks)),
      })
    } catch {
      done(null)
    }
  })
})()

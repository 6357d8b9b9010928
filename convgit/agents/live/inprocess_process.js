// The recorder's process as convgit's in-process client sees it (inprocess_direct.js, and
// inprocess_worker.js), written into each by convgit/agents/live/inprocess.py: its pid as its
// state file names it, when that process is its recorder (its command line names the key);
// stopped (a stopped recorder would keep every hook waiting); ended (SIGKILL, then waited for
// within the handshake).
const convgitRecorderProcess = (read, HANDSHAKE_MS) => {
  const pause = new Int32Array(new SharedArrayBuffer(4))
  const status = (pid) => {
    try {
      const text = read("/proc/" + pid + "/stat", "latin1")
      return text.slice(text.lastIndexOf(")") + 1).trim().split(" ")[0]
    } catch {
      return ""
    }
  }
  const recorder = (folder, key) => {
    try {
      const pid = JSON.parse(read(folder + "/" + key + ".json", "utf8")).pid
      const command = read("/proc/" + pid + "/cmdline", "latin1").split("\0")
      return Number.isInteger(pid) && pid > 0 && command.includes(key) ? pid : 0
    } catch {
      return 0
    }
  }
  const stopped = (pid) => pid > 0 && ["T", "t"].includes(status(pid))
  const end = (pid) => {
    if (pid <= 0) return
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      return
    }
    const until = Date.now() + HANDSHAKE_MS
    while (!["", "Z", "X"].includes(status(pid)) && Date.now() < until) Atomics.wait(pause, 0, 0, 5)
  }
  return { recorder, stopped, end }
}

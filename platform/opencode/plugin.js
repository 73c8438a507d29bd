// memnode plugin for OpenCode: written by `memnode install opencode`, removed by
// `memnode uninstall opencode`. It hands OpenCode's plugin hook arguments to memnode's hook
// binary, which strips private text, reaches the local node with the token it reads itself,
// and answers at once. It never throws into OpenCode and waits at most a few seconds.
import { spawn } from "node:child_process"

const HOOK = __MEMNODE_HOOK__

function hook(event, payload) {
  return new Promise((resolve) => {
    let out = ""
    let child
    try {
      child = spawn(HOOK, ["hook", "opencode", event], { stdio: ["pipe", "pipe", "ignore"] })
    } catch {
      resolve({})
      return
    }
    const timer = setTimeout(() => {
      try { child.kill() } catch {}
      resolve({})
    }, 15000)
    child.stdout.on("data", (d) => { out += d })
    child.on("error", () => { clearTimeout(timer); resolve({}) })
    child.on("close", () => {
      clearTimeout(timer)
      try { resolve(JSON.parse(out)) } catch { resolve({}) }
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

// partID is a new part ID in OpenCode's ascending form: "prt_", 12 hex digits of the time
// in ms ×4096 plus a counter (its low 48 bits), then 14 random base62 characters.
let lastMs = 0
let counter = 0
function partID() {
  const now = Date.now()
  if (now !== lastMs) { lastMs = now; counter = 0 }
  counter++
  const t = (BigInt(now) * 4096n + BigInt(counter)) & 0xffffffffffffn
  const abc = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
  let rnd = ""
  for (let i = 0; i < 14; i++) rnd += abc[Math.floor(Math.random() * 62)]
  return "prt_" + t.toString(16).padStart(12, "0") + rnd
}

export const MemnodePlugin = async ({ directory, worktree, client }) => {
  const cwd = directory || worktree || process.cwd()
  const contexts = new Map() // sessionID → Promise of the session's context
  const fileContexts = new Map() // callID of a read → Promise of the file's context
  return {
    // Context: asked once per session, put into every request's system prompt, but not the
    // title generator's.
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const sid = input && input.sessionID
        if (!sid || !output || !Array.isArray(output.system)) return
        if (String(output.system[0] || "").startsWith("You are a title generator")) return
        if (!contexts.has(sid)) {
          contexts.set(sid, hook("context", { cwd, input: { sessionID: sid } }).then((r) => (r && r.additionalContext) || ""))
        }
        const text = await contexts.get(sid)
        if (text) output.system.push(text)
      } catch {}
    },
    // The prompt is recorded; the context memnode answers for it (semantic inject: the past
    // observations related to the prompt, when the node has it on) is added to the user's
    // message as a synthetic text part, which the model sees and the TUI does not show.
    "chat.message": async (input, output) => {
      try {
        const r = await hook("session-init", { cwd, input, output })
        const text = r && r.additionalContext
        const first = output && Array.isArray(output.parts) && output.parts[0]
        if (!text || !first || !first.messageID) return
        output.parts.push({ id: partID(), sessionID: first.sessionID, messageID: first.messageID, type: "text", synthetic: true, text })
      } catch {}
    },
    // File context: what memnode knows about a file is asked for when a read starts and
    // appended to the read's output, which is what the model sees.
    "tool.execute.before": async (input, output) => {
      try {
        if (!input || input.tool !== "read" || !input.callID) return
        fileContexts.set(input.callID, hook("file-context", { cwd, input, output }).then((r) => (r && r.additionalContext) || ""))
      } catch {}
    },
    "tool.execute.after": async (input, output) => {
      try {
        // The payload is serialized here, before the file context is appended: the record
        // holds the tool's own output.
        const recorded = hook("observation", { cwd, input, output })
        const fc = input && fileContexts.get(input.callID)
        if (fc) {
          fileContexts.delete(input.callID)
          const text = await fc
          if (text && output && typeof output.output === "string") output.output += "\n\n" + text
        }
        await recorded
      } catch {}
    },
    event: async ({ event }) => {
      try {
        if (!event) return
        if (event.type === "message.part.updated") {
          const part = event.properties && event.properties.part
          if (part && part.type === "tool" && part.state && part.state.status === "error") {
            fileContexts.delete(part.callID) // a failed read gets no tool.execute.after
            await hook("observation", { cwd, event })
          }
        } else if (event.type === "session.idle") {
          const sid = event.properties && event.properties.sessionID
          let last = ""
          try {
            const res = await client.session.messages({ path: { id: sid } })
            const msgs = (res && res.data) || []
            for (let i = msgs.length - 1; i >= 0 && !last; i--) {
              if (!msgs[i] || !msgs[i].info || msgs[i].info.role !== "assistant") continue
              last = (msgs[i].parts || []).filter((p) => p.type === "text").map((p) => p.text).join("\n").trim()
            }
          } catch {}
          await hook("summarize", { cwd, event, last_assistant_message: last })
        }
      } catch {}
    },
  }
}

// The official MCP TypeScript SDK client drives `mvm mcp` over stdio
// (tests/integration/mcp-sdk-client.sh). Exit 0 when every check holds.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import Ajv from "ajv";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const MVM = process.env.MVM;
const SB = "mcp-1";
const LONG = { timeout: 600000, resetTimeoutOnProgress: true };

function step(what) { console.log(`mcp: ${what}`); }

// Raw lines to a second server: what a broken client sends. Every request
// gets its JSON-RPC error, notifications get nothing, the server stays up.
async function raw(lines) {
	const p = spawn(MVM, ["mcp"], { stdio: ["pipe", "pipe", "inherit"] });
	const replies = [];
	const rl = createInterface({ input: p.stdout });
	rl.on("line", (l) => replies.push(JSON.parse(l)));
	for (const l of lines)
		p.stdin.write(l + "\n");
	p.stdin.end();
	const code = await new Promise((res) => p.on("close", res));
	assert.equal(code, 0, "mvm mcp exits 0 at the end of its input");
	return replies;
}

step("malformed messages");
const big = JSON.stringify({ jsonrpc: "2.0", id: 99, method: "ping", params: { pad: "x".repeat(5 << 20) } });
const r = await raw([
	JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
		params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
	JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
	"this is not json",
	JSON.stringify([{ jsonrpc: "2.0", id: 2, method: "ping" }]),
	JSON.stringify({ jsonrpc: "2.0", id: 3, method: "no/such/method" }),
	JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "sandbox_exec", arguments: { name: 5 } } }),
	JSON.stringify({ jsonrpc: "2.0", method: "tools/call", params: { name: "sandbox_exec" } }),
	big,
	JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }),
]);
assert.equal(r.length, 7, JSON.stringify(r).slice(0, 2000));
assert.equal(r[0].result.protocolVersion, LATEST_PROTOCOL_VERSION);
assert.deepEqual(r.slice(1).map((m) => [m.id, m.error?.code]),
	[[null, -32700], [null, -32600], [3, -32601], [4, -32602], [null, -32600], [5, undefined]]);
assert.match(r[5].error.message, /4 MiB/);
assert.deepEqual(r[6].result, {});

const transport = new StdioClientTransport({ command: MVM, args: ["mcp"], env: process.env, stderr: "inherit" });
const client = new Client({ name: "mvm-test", version: "1.0.0" });
await client.connect(transport);
assert.equal(client.getServerVersion().name, "mvm");

step("tools/list and schemas");
const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
assert.deepEqual(names, ["checkpoint", "diff", "file_read", "file_write", "promote", "rollback",
	"sandbox_create", "sandbox_exec", "sandbox_list", "sandbox_remove"]);
const ajv = new Ajv({ strict: false });
for (const t of tools) {
	assert.equal(t.inputSchema.type, "object", `${t.name} input`);
	ajv.compile(t.inputSchema);
	if (t.outputSchema)
		ajv.compile(t.outputSchema);
	if (t.name !== "sandbox_list")
		assert.ok(t.inputSchema.required.includes("name"), `${t.name} takes name`);
}

async function call(name, args, opts = LONG) {
	const r = await client.callTool({ name, arguments: args }, undefined, opts);
	assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
	assert.equal(r.content[0].type, "text");
	assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
	return r.structuredContent;
}

step("sandbox_create (no network by default)");
const created = await call("sandbox_create", { name: SB, memory: "256M" });
assert.equal(created.status, "running");
assert.equal(created.network.mode, "none");
const list = await call("sandbox_list", {});
assert.ok(list.sandboxes.some((s) => s.name === SB && s.status === "running"));

step("sandbox_exec");
let x = await call("sandbox_exec", { name: SB, command: "echo hello; echo oops >&2; ls /sys/class/net; exit 3" });
assert.equal(x.exit_code, 3);
assert.equal(x.stdout, "hello\nlo\n");
assert.equal(x.stderr, "oops\n");
x = await call("sandbox_exec", { name: SB, command: "echo $GREETING in $(pwd)", env: { GREETING: "hi" }, cwd: "/tmp" });
assert.equal(x.stdout, "hi in /tmp\n");
// Bytes that are not UTF-8 come back replaced, never as broken JSON.
x = await call("sandbox_exec", { name: SB, command: "printf 'a\\377b'" });
assert.equal(x.stdout, "a\ufffdb");
x = await call("sandbox_exec", { name: SB, command: "sleep 30", timeout: 1 });
assert.equal(x.timed_out, true);
assert.equal(x.exit_code, null);

step("progress notifications for a long command");
let progress = 0;
x = await call("sandbox_exec", { name: SB, command: "sleep 5; echo done" },
	{ ...LONG, onprogress: () => { progress++; } });
assert.equal(x.stdout, "done\n");
assert.ok(progress >= 1, `progress notifications: ${progress}`);

step("file_write / file_read");
await call("file_write", { name: SB, path: "/tmp/note.txt", content: "first\n" });
let f = await call("file_read", { name: SB, path: "/tmp/note.txt" });
assert.deepEqual([f.content, f.encoding, f.size, f.truncated], ["first\n", "utf-8", 6, false]);
const bin = Buffer.from([0, 1, 2, 0xfe, 0xff, 0x80, 10]);
await call("file_write", { name: SB, path: "/tmp/bin", content: bin.toString("base64"), encoding: "base64" });
f = await call("file_read", { name: SB, path: "/tmp/bin" });
assert.equal(f.encoding, "base64");
assert.deepEqual(Buffer.from(f.content, "base64"), bin);
f = await call("file_read", { name: SB, path: "/tmp/note.txt", max_bytes: 2 });
assert.deepEqual([f.content, f.size, f.truncated], ["fi", 6, true]);

step("checkpoint / rollback");
const cp = await call("checkpoint", { name: SB, tag: "before" });
assert.equal(cp.tag, "before");
await call("file_write", { name: SB, path: "/tmp/note.txt", content: "second\n" });
await call("rollback", { name: SB, tag: "before" });
f = await call("file_read", { name: SB, path: "/tmp/note.txt" });
assert.equal(f.content, "first\n");

step("errors");
await assert.rejects(client.callTool({ name: "sandbox_exec", arguments: { name: SB } }),
	(e) => e.code === -32602 && /command/.test(e.message));
await assert.rejects(client.callTool({ name: "sandbox_exec", arguments: { name: SB, command: "true", timeout: "x" } }),
	(e) => e.code === -32602);
await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (e) => e.code === -32602);
await assert.rejects(client.request({ method: "resources/list", params: {} }, (await import("zod")).z.any()),
	(e) => e.code === -32601);
const missing = await client.callTool({ name: "sandbox_exec", arguments: { name: "nope", command: "true" } });
assert.ok(missing.isError && /no sandbox named nope/.test(missing.content[0].text));
await client.ping();

step("sandbox_remove");
const rm = await call("sandbox_remove", { name: SB });
assert.equal(rm.removed, true);
assert.ok(!(await call("sandbox_list", {})).sandboxes.some((s) => s.name === SB));
await client.close();
console.log("mcp: all checks passed");

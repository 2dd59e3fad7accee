// The official MCP TypeScript SDK client drives `mvm serve`'s MCP endpoint
// over the Streamable HTTP transport (tests/integration/mcp-http.sh), as
// tenants alice (token A, quota of one sandbox and no checkpoint) and bob (token B).
// Exit 0 when every check holds.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";

const BASE = process.env.MCP_BASE;	// http://127.0.0.1:PORT
const URL_MCP = new URL(`${BASE}/v1/mcp`);
const A = process.env.TOKEN_A, B = process.env.TOKEN_B;
const SB = "h1";
const LONG = { timeout: 600000 };

function step(what) { console.log(`mcp-http: ${what}`); }

async function connect(token) {
	const transport = new StreamableHTTPClientTransport(URL_MCP,
		{ requestInit: { headers: { Authorization: `Bearer ${token}` } } });
	const client = new Client({ name: "mvm-http-test", version: "1.0.0" });
	await client.connect(transport);
	return { client, transport };
}

async function call(client, name, args) {
	return client.callTool({ name, arguments: args }, undefined, LONG);
}

// A raw POST, as a broken or hostile client sends it.
async function post(token, session, body, extra = {}) {
	const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json",
		Accept: "application/json, text/event-stream", ...extra };
	if (session)
		headers["Mcp-Session-Id"] = session;
	const r = await fetch(URL_MCP, { method: "POST", headers, body });
	const text = await r.text();
	return { status: r.status, body: text ? JSON.parse(text) : null };
}

step("a wrong token gets 401, through the SDK and raw");
await assert.rejects(connect(`${A}x`), (e) => e.code === 401 && /bearer token/.test(e.message));
assert.equal((await post(`${A}x`, null, "{}")).status, 401);

step("alice connects: a session id of 256 random bits");
const a = await connect(A);
assert.match(a.transport.sessionId, /^[0-9a-f]{64}$/);
assert.equal(a.client.getServerVersion().name, "mvm");
assert.equal(a.transport.protocolVersion, LATEST_PROTOCOL_VERSION);

step("tools/list");
const { tools } = await a.client.listTools();
for (const t of ["sandbox_create", "sandbox_exec", "file_read", "file_write", "sandbox_list", "sandbox_remove"])
	assert.ok(tools.some((x) => x.name === t), `tool ${t} listed`);

step("sandbox_create");
let r = await call(a.client, "sandbox_create", { name: SB });
assert.equal(r.isError, false, JSON.stringify(r));
assert.equal(r.structuredContent.name, SB);
assert.equal(r.structuredContent.status, "running");

step("the quota holds over MCP as over the REST API");
r = await call(a.client, "sandbox_create", { name: "h2" });
assert.equal(r.isError, true);
assert.match(r.content[0].text, /quota: at most 1 sandboxes/);

step("sandbox_exec");
r = await call(a.client, "sandbox_exec", { name: SB, command: "echo hi; echo oops >&2; exit 3" });
assert.equal(r.isError, false, JSON.stringify(r));
assert.equal(r.structuredContent.exit_code, 3);
assert.equal(r.structuredContent.stdout, "hi\n");
assert.equal(r.structuredContent.stderr, "oops\n");

step("file_write and file_read");
r = await call(a.client, "file_write", { name: SB, path: "/tmp/note", content: "from MCP over HTTP\n" });
assert.equal(r.isError, false, JSON.stringify(r));
r = await call(a.client, "file_read", { name: SB, path: "/tmp/note" });
assert.equal(r.isError, false, JSON.stringify(r));
assert.equal(r.structuredContent.content, "from MCP over HTTP\n");

step("the checkpoint quota holds over MCP as over the REST API (alice may hold none)");
r = await call(a.client, "checkpoint", { name: SB });
assert.equal(r.isError, true, JSON.stringify(r));
assert.match(r.content[0].text, /quota: at most 0 checkpoints/);

step("one namespace with the REST API: alice's h1 is /v1/sandboxes/h1");
let g = await fetch(`${BASE}/v1/sandboxes/${SB}`, { headers: { Authorization: `Bearer ${A}` } });
assert.equal(g.status, 200);
g = await fetch(`${BASE}/v1/sandboxes/${SB}`, { headers: { Authorization: `Bearer ${B}` } });
assert.equal(g.status, 404);
r = await call(a.client, "sandbox_list", {});
assert.deepEqual(r.structuredContent.sandboxes.map((s) => s.name), [SB]);

step("promote gives no host path to a remote caller");
r = await call(a.client, "promote", { name: SB });
assert.equal(r.isError, true);
assert.match(r.content[0].text, /diff/);

step("bob sees nothing of alice's sandbox");
const b = await connect(B);
assert.notEqual(b.transport.sessionId, a.transport.sessionId);
r = await call(b.client, "sandbox_list", {});
assert.deepEqual(r.structuredContent.sandboxes, []);
for (const [tool, args] of [["sandbox_exec", { name: SB, command: "true" }],
	["file_read", { name: SB, path: "/tmp/note" }], ["sandbox_remove", { name: SB }],
	["checkpoint", { name: SB }]]) {
	r = await call(b.client, tool, args);
	assert.equal(r.isError, true, `${tool} as bob`);
	assert.match(r.content[0].text, new RegExp(`no sandbox named ${SB}\\b`), `${tool} as bob`);
}
r = await call(b.client, "sandbox_create", { name: "h1" });
assert.equal(r.isError, false, "bob's h1 is bob.h1, not alice's");
r = await call(b.client, "sandbox_remove", { name: "h1" });
assert.equal(r.isError, false);

step("alice's session id under bob's token is unknown (404)");
const ping = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" });
assert.equal((await post(B, a.transport.sessionId, ping)).status, 404);

step("malformed messages get JSON-RPC errors; the session goes on");
let p = await post(A, a.transport.sessionId, "this is not json");
assert.equal(p.status, 400);
assert.equal(p.body.error.code, -32700);
p = await post(A, a.transport.sessionId, JSON.stringify({ jsonrpc: "2.0", id: 8, method: "no/such" }));
assert.equal(p.body.error.code, -32601);
p = await post(A, null, ping);
assert.equal(p.status, 400, "no session id");
p = await post(A, a.transport.sessionId, ping, { Origin: "http://rebind.example" });
assert.equal(p.status, 403);
p = await post(A, a.transport.sessionId, ping, { "MCP-Protocol-Version": "1900-01-01" });
assert.equal(p.status, 400);
p = await post(A, a.transport.sessionId, ping);
assert.equal(p.status, 200);
assert.deepEqual(p.body.result, {});

step("sandbox_remove, then the session ends (DELETE)");
r = await call(a.client, "sandbox_remove", { name: SB });
assert.equal(r.isError, false, JSON.stringify(r));
const old = a.transport.sessionId;
await a.transport.terminateSession();
assert.equal((await post(A, old, ping)).status, 404);
await a.client.close();
await b.transport.terminateSession();
await b.client.close();
step("all checks passed");

// `mvm mcp`'s operator policy driven by the official MCP TypeScript SDK
// client (tests/integration/mcp-policy.sh sets MVM, T, MVM_STATE_DIR,
// XDG_STATE_HOME and makes pol-1, owned by mcp:alpha). Exit 0 when every
// check holds.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

const { MVM, T } = process.env;
const LONG = { timeout: 900000, resetTimeoutOnProgress: true };
const OUT = fs.realpathSync(`${T}/out`);
const SECRET = "s3cr3t-" + Math.random().toString(36).slice(2);

function step(what) { console.log(`mcp-policy: ${what}`); }

async function server(...args) {
	const transport = new StdioClientTransport({ command: MVM, args: ["mcp", ...args], env: process.env, stderr: "inherit" });
	const client = new Client({ name: "mvm-policy-test", version: "1.0.0" });
	await client.connect(transport);
	return client;
}

async function ok(client, name, args) {
	const r = await client.callTool({ name, arguments: args }, undefined, LONG);
	assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
	return r.structuredContent;
}

async function refused(client, name, args, re) {
	const r = await client.callTool({ name, arguments: args }, undefined, LONG);
	assert.ok(r.isError, `${name} ${JSON.stringify(args)} was not refused: ${JSON.stringify(r.content)}`);
	assert.match(r.content[0].text, re, `${name} ${JSON.stringify(args)}`);
	return r.content[0].text;
}

// Every command line of every process, as one string each.
function cmdlines() {
	const out = [];
	for (const p of fs.readdirSync("/proc")) {
		if (!/^\d+$/.test(p))
			continue;
		try {
			out.push(fs.readFileSync(`/proc/${p}/cmdline`).toString().replaceAll("\0", " "));
		} catch { /* gone meanwhile */ }
	}
	return out;
}

step("scope: another identity sees nothing of pol-1 (item 4)");
const beta = await server("--id", "beta", "--out-root", OUT);
assert.ok(!(await ok(beta, "sandbox_list", {})).sandboxes.some((s) => s.name === "pol-1"));
for (const [tool, extra] of [["sandbox_exec", { command: "true" }], ["file_read", { path: "/etc/hostname" }],
	["file_write", { path: "/tmp/x", content: "x" }], ["checkpoint", {}], ["rollback", { tag: "t" }],
	["diff", {}], ["promote", { out: "p0" }], ["sandbox_remove", {}]]) {
	const msg = await refused(beta, tool, { name: "pol-1", ...extra }, /no sandbox named pol-1/);
	const ghost = await refused(beta, tool, { name: "pol-ghost", ...extra }, /no sandbox named pol-ghost/);
	assert.equal(msg.replace("pol-1", "X"), ghost.replace("pol-ghost", "X"), `${tool}: another's reads like a missing one`);
}
assert.ok(!fs.existsSync(`${OUT}/p0`));
await beta.close();
const all = await server("--id", "beta", "--all-sandboxes", "--out-root", OUT);
assert.ok((await ok(all, "sandbox_list", {})).sandboxes.some((s) => s.name === "pol-1"), "--all-sandboxes lists it");
await all.close();

step("the allow-rule ceiling and images by name, default policy (items 6, 7)");
const dflt = await server("--id", "alpha");
for (const rule of ["host-loopback:8080/tcp", "127.0.0.1:80/tcp", "10.0.0.0/8", "10.1.2.3", "192.168.1.1",
	"100.64.0.1", "169.254.169.254", "0.0.0.0/0", "8.0.0.0/8", "[fe80::1]", "[fd00::1]", "[::1]"])
	await refused(dflt, "sandbox_create", { name: "pol-x", allow: [rule] }, /beyond the operator's ceiling/);
for (const image of ["/etc/passwd", "../etc/passwd", "./x", "passwd"])
	await refused(dflt, "sandbox_create", { name: "pol-x", image }, /image|no image named/);
await refused(dflt, "sandbox_create", { name: "pol-1" }, /taken/);
await refused(dflt, "sandbox_create", { name: "pol-x", template: "tpl-none" }, /template|no such|not found|exist/i);
await assert.rejects(dflt.callTool({ name: "sandbox_create", arguments: { name: "pol-x", template: "/tmp/tpl" } }),
	(e) => e.code === -32602, "a template path fails the schema");
await assert.rejects(dflt.callTool({ name: "sandbox_create", arguments: { name: "pol-x", template: "t", image: "i" } }),
	(e) => e.code === -32602, "template with image");
assert.ok(!fs.existsSync(`${process.env.MVM_STATE_DIR}/pol-x`), "nothing was created");

step("promote: the default output root (item 5)");
const ws = (await ok(dflt, "sandbox_exec", { name: "pol-1", command: "d=/work; [ -d /work/ws ] && d=/work/ws; echo changed >> $d/a.txt; echo $d" })).stdout.trim();
const p1 = await ok(dflt, "promote", { name: "pol-1" });
const droot = `${process.env.XDG_STATE_HOME}/mvm/mcp-out`;
assert.equal(p1.out, `${fs.realpathSync(droot)}/pol-1-promote-1`);
assert.equal(fs.statSync(droot).mode & 0o777, 0o700, "the default root is private");
assert.match(fs.readFileSync(`${p1.out}/changes.patch`, "utf8"), /\+changed/);
assert.equal((await ok(dflt, "promote", { name: "pol-1" })).out, `${fs.realpathSync(droot)}/pol-1-promote-2`);
await dflt.close();

step("promote: beneath --out-root only, never through a symlink (item 5)");
const alpha = await server("--id", "alpha", "--out-root", OUT, "--allow-max", `${T}/allow-max`);
const b1 = await ok(alpha, "promote", { name: "pol-1", out: "b1" });
assert.equal(b1.out, `${OUT}/b1`);
assert.ok(fs.existsSync(`${OUT}/b1/report.json`));
assert.equal((await ok(alpha, "promote", { name: "pol-1", out: `${OUT}/sub/b2` })).out, `${OUT}/sub/b2`);
await refused(alpha, "promote", { name: "pol-1", out: `${T}/outside/b` }, /outside the output root/);
await refused(alpha, "promote", { name: "pol-1", out: "../b" }, /relative path beneath/);
await refused(alpha, "promote", { name: "pol-1", out: "esc/b" }, /symlink/);
await refused(alpha, "promote", { name: "pol-1", out: "esc" }, /exists/);
await refused(alpha, "promote", { name: "pol-1", out: "b1" }, /exists/);

step("promote with the most checks the schema allows, a workspace and a timeout (item 12)");
const b3 = await ok(alpha, "promote", { name: "pol-1", out: "b3", checks: Array(64).fill("true"),
	workspace: ws, check_timeout: 600 });
assert.equal(b3.checks_passed, true);
assert.equal(b3.report.checks.length, 64);

step("create within --allow-max, env through a descriptor (items 6, 9)");
const seen = [];
const poll = setInterval(() => { for (const c of cmdlines()) if (c.includes("pol-2")) seen.push(c); }, 20);
const made = await ok(alpha, "sandbox_create", { name: "pol-2", memory: "256M",
	allow: ["host-loopback:8080/tcp", "203.0.113.0/24:80/tcp"], env: { SECRET, OTHER: "line1\nline2" } });
clearInterval(poll);
for (const c of cmdlines())
	if (c.includes("pol-2")) seen.push(c);
assert.ok(seen.some((c) => / create pol-2 /.test(c)), `the create child was seen: ${seen.slice(0, 3)}`);
assert.ok(seen.some((c) => / vmm pol-2/.test(c)), `the VMM was seen: ${seen.slice(0, 3)}`);
assert.ok(!seen.some((c) => c.includes(SECRET)), "a secret on a command line");
assert.ok(!cmdlines().some((c) => c.includes(SECRET)), "a secret on a command line");
assert.equal(made.network.mode, "allowlist");
let x = await ok(alpha, "sandbox_exec", { name: "pol-2", command: 'printf "%s|%s" "$SECRET" "$OTHER"' });
assert.equal(x.stdout, `${SECRET}|line1\nline2`);
const cfg = JSON.parse(fs.readFileSync(`${process.env.MVM_STATE_DIR}/pol-2/config.json`, "utf8"));
assert.equal(cfg.owner, "mcp:alpha");
await refused(alpha, "sandbox_create", { name: "pol-y", allow: ["host-loopback:22/tcp"] }, /ceiling/);
assert.ok((await ok(alpha, "sandbox_list", {})).sandboxes.some((s) => s.name === "pol-2"));
await ok(alpha, "sandbox_remove", { name: "pol-2" });
await alpha.close();
console.log("mcp-policy: all checks passed");

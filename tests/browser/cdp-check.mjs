// A real CDP client (puppeteer-core) against `mvm browser`'s endpoint, for
// tests/integration/browser-cdp.sh. One step per run; prints one JSON line.
//   form CDP_URL BASE       open BASE/form.html, fill and submit the form, read
//                           the answer, take a CDP screenshot; the page stays open
//   blocked CDP_URL URL     a navigation that must fail; its error
//   load CDP_URL URL        the same navigation step, expected to succeed (error null)
//   pages CDP_URL           the open pages: url and #answer text
//   close CDP_URL           close the pages that show an #answer
//   hold CDP_URL            stay connected; report when the connection drops
//   wsprobe CDP_URL PAGE WS open PAGE in a new tab; what a WebSocket its script
//                           opens to WS gets: "open:" and the first message's
//                           first 11 bytes, "error" or "closed:CODE"
// Everything in the box is emulated and slow: generous timeouts, no sleeps.
import puppeteer from "puppeteer-core";

const STEP_MS = 240000;
const [step, cdp, arg] = process.argv.slice(2);
const out = (o) => console.log(JSON.stringify(o));

async function connect() {
	// Exactly what users write: puppeteer fetches /json/version through the
	// relay and follows its webSocketDebuggerUrl (built from our Host header).
	return puppeteer.connect({ browserURL: cdp, protocolTimeout: STEP_MS, defaultViewport: null });
}

// A new tab that opens @url itself (Target.createTarget), rather than
// newPage() + goto(): that navigation leaves about:blank's renderer for a new
// one, and in the emulated box an evaluate sent around that swap can go
// unanswered. Waits until the document is complete.
async function openTab(b, url) {
	const s = await b.target().createCDPSession();
	await s.send("Target.createTarget", { url });
	const t = await b.waitForTarget((x) => x.url() === url, { timeout: STEP_MS });
	const page = await t.page();
	page.setDefaultTimeout(STEP_MS);
	await page.waitForFunction(() => document.readyState === "complete", { polling: 500 });
	return page;
}

async function form() {
	const b = await connect();
	const page = await openTab(b, `${arg}/form.html`);
	await page.type("#name", "mvm-agent");
	await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("#go")]);
	// Read the answer through waitForFunction, which re-runs in whatever
	// document is current: a $eval right after the navigation can still name
	// the old document's context, and on a loaded box it failed with
	// "DOM.describeNode: Cannot find context with specified id".
	const answer = await (await page.waitForFunction(
		() => document.readyState === "complete" && document.querySelector("#answer")?.textContent,
		{ polling: 500 })).jsonValue();
	const shot = await page.screenshot({ type: "png" });
	const screen = await page.evaluate(() => [screen.width, screen.height]);
	out({ answer, url: page.url(), png: shot.subarray(0, 8).toString("hex"), bytes: shot.length,
	      screen, version: await b.version(), ws: b.wsEndpoint() });
	await b.disconnect();
}

// At most @ms for @p; @dflt after that (an evaluate the box never answers).
const within = (p, ms, dflt) => Promise.race([p.catch(() => dflt),
	new Promise((r) => setTimeout(() => r(dflt), ms).unref())]);

async function navigate() {
	const b = await connect();
	const page = await b.newPage();
	let error = null;
	try {
		await page.goto(arg, { waitUntil: "load", timeout: STEP_MS });
	} catch (e) {
		error = String(e.message || e);
	}
	const body = error ? "" : await within(page.evaluate(() => document.body ? document.body.innerText : ""), 30000, "");
	out({ error, body: body.slice(0, 200) });
	await page.close();
	await b.disconnect();
}

async function pages() {
	const b = await connect();
	const list = [];
	for (const p of await b.pages()) {
		const answer = await within(p.$eval("#answer", (e) => e.textContent), 60000, null);
		list.push({ url: p.url(), answer });
	}
	out({ pages: list });
	await b.disconnect();
}

async function close() {
	const b = await connect();
	let closed = 0;
	for (const p of await b.pages())
		if (await within(p.$("#answer"), 60000, null)) {
			await p.close();
			closed++;
		}
	out({ closed });
	await b.disconnect();
}

async function hold() {
	const b = await connect();
	const t0 = Date.now();
	out({ connected: true });
	await new Promise((resolve) => {
		b.on("disconnected", resolve);
		setTimeout(resolve, STEP_MS).unref();
	});
	out({ disconnected: !b.connected, after_ms: Date.now() - t0 });
}

async function wsprobe() {
	const b = await connect();
	const page = await openTab(b, arg);
	const ws = process.argv[5];
	const got = await page.evaluate((url) => new Promise((resolve) => {
		const w = new WebSocket(url, ["binary"]);
		w.binaryType = "arraybuffer";
		w.onmessage = (e) => { resolve("open:" + new TextDecoder().decode(e.data).slice(0, 11)); w.close(); };
		w.onerror = () => resolve("error");
		w.onclose = (e) => resolve("closed:" + e.code);
		setTimeout(() => resolve("no answer"), 120000);
	}), ws);
	out({ page: arg, ws, got });
	await page.close();
	await b.disconnect();
}

const steps = { form, blocked: navigate, load: navigate, pages, close, hold, wsprobe };
if (!steps[step]) {
	console.error("usage: cdp-check.mjs form|blocked|load|pages|close|hold|wsprobe CDP_URL [ARG...]");
	process.exit(2);
}
// Node exits with status 0 when its event loop runs dry, even with the
// step's promise still pending: a connection closed under puppeteer (the
// relay refusing another user) once ended this client silently with 0.
// Reaching here means the step never finished: that is a failure.
process.on("beforeExit", () => {
	console.error(`cdp-check ${step}: nothing left to wait for and no result (the connection ended unanswered)`);
	process.exit(3);
});
steps[step]().then(() => process.exit(0), (e) => {
	console.error(`cdp-check ${step}: ${e && e.stack || e}`);
	process.exit(1);
});

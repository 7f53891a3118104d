// Captures one call to an AG-UI agent as a browser does, into a HAR file, with Playwright's
// own recorder (`recordHar`) driving the system Chromium: the page opens the agent's origin
// (GET ORIGIN/PAGE, so the call is same-origin), then POSTs the RunAgentInput with fetch and
// reads the stream to its end.
//
//   node har-capture.mjs URL INPUT.json OUT.har [--page /health] [--chromium PATH]
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const [value] = args.splice(at, 2).slice(1);
  return value;
};
const page_path = option("--page", "/health");
const executablePath = option("--chromium", process.env.CHROMIUM || "/usr/bin/chromium");
const [url, inputFile, out] = args;
if (!out) {
  console.error("usage: node har-capture.mjs URL INPUT.json OUT.har [--page PATH] [--chromium PATH]");
  process.exit(2);
}
const body = readFileSync(inputFile, "utf8");

const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
try {
  const context = await browser.newContext({ recordHar: { path: out, content: "embed" } });
  const page = await context.newPage();
  await page.goto(new URL(page_path, url).toString());
  const received = await page.evaluate(
    async ({ url, body }) => {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body,
      });
      return (await response.text()).length;
    },
    { url, body },
  );
  console.log(`received ${received} characters`);
  await context.close();
} finally {
  await browser.close();
}

// Drives the page of `reasonix serve` started in a project whose
// .mcp.json server nobody trusted yet: the trust question asked at
// start-up, before the page connected, shows as soon as the page opens;
// "Allow once" starts the server, and a new session calls its tool. Env
// and report as browser.mjs.
import { chromium } from "playwright-core";

const shots = process.env.SHOTS;
const report = { steps: [] };
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true, args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
const step = async (name, f) => {
  report.current = name;
  await f();
  report.steps.push(name);
  await page.screenshot({ path: `${shots}/${report.steps.length}-${name}.png` });
};
const transcript = () => page.locator(".transcript:not([hidden])");

try {
  await step("trust-question", async () => {
    await page.goto(process.env.SERVE_URL);
    await page.waitForSelector("#approval[open]", { timeout: 10000 });
    report.trustText = await page.locator("#approval").innerText();
  });
  await step("allow", async () => {
    await page.click('#ap-choices button[data-choice="allow"]');
    await page.waitForSelector("#approval", { state: "hidden" });
    await page.locator("#server-notices li", { hasText: "is running" }).waitFor({ timeout: 10000 });
    report.notices = await page.locator("#server-notices").innerText();
  });
  await step("use-the-tool", async () => {
    await page.click("#new-session");
    await page.waitForSelector("#input:not([disabled])");
    await page.fill("#input", "count the words");
    await page.press("#input", "Enter");
    await transcript().locator(".answer", { hasText: "Counted them." }).waitFor();
    report.transcript = await transcript().innerText();
  });
} catch (e) {
  report.error = `${report.current}: ${e.message}`;
  await page.screenshot({ path: `${shots}/failed-${report.current}.png` }).catch(() => {});
}
report.pageErrors = errors;
await browser.close();
process.stdout.write(JSON.stringify(report));

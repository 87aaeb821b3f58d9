// Fills in an MCP server's request for input on the page of `reasonix
// serve` in a real Chromium through playwright-core. Env as browser.mjs.
// Prints a JSON report the Go test checks.
import { chromium } from "playwright-core";

const shots = process.env.SHOTS;
const report = { steps: [] };
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true, args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
const step = async (name, f) => {
  report.current = name;
  await f();
  report.steps.push(name);
  await page.screenshot({ path: `${shots}/elicit-${report.steps.length}-${name}.png` });
};
const transcript = () => page.locator(".transcript:not([hidden])");
const field = (label) => page.locator("#el-fields .field", { hasText: label });

try {
  await step("open", async () => {
    await page.goto(process.env.SERVE_URL);
    await page.click("#new-session");
    await page.waitForSelector("#input:not([disabled])");
    await page.fill("#input", "warm up");
    await page.press("#input", "Enter");
    await transcript().locator(".answer", { hasText: "Ready." }).waitFor();
  });
  await step("form", async () => {
    await page.fill("#input", "deploy it");
    await page.press("#input", "Enter");
    await page.waitForSelector("#elicit[open]");
    report.formText = await page.locator("#elicit").innerText();
    await field("Environment").locator("select").selectOption("prod");
    await field("Owner").locator("input").fill("not an address");
    await page.click("#el-accept");
    await page.locator("#el-error", { hasText: "must be an email address" }).waitFor();
    report.errorText = await page.locator("#el-error").innerText();
  });
  await step("submit", async () => {
    await field("Owner").locator("input").fill("ops@example.com");
    await page.locator('#el-fields .picks label:has-text("test") input').check();
    await field("replicas").locator("input").fill("4");
    await page.click("#el-accept");
    await transcript().locator(".answer", { hasText: "Deployed." }).waitFor();
    report.open = await page.locator("#elicit").evaluate((d) => d.open);
  });
} catch (e) {
  report.error = `${report.current}: ${e.message}`;
  await page.screenshot({ path: `${shots}/elicit-failed-${report.current}.png` }).catch(() => {});
}
report.pageErrors = errors;
await browser.close();
process.stdout.write(JSON.stringify(report));

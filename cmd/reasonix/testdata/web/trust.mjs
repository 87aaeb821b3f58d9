// Drives the page of `reasonix serve` started in a project whose
// .mcp.json server nobody trusted yet: the trust question asked at
// start-up, before the page connected, shows as soon as the page opens;
// "Allow once" starts the server, and a new session calls its tool. Env
// and report as harness.mjs.
import { drive } from "./harness.mjs";

await drive({}, async ({ page, report, step, transcript }) => {
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
});

// Fills in an MCP server's request for input on the page of `reasonix
// serve` in a real Chromium through playwright-core. Env as harness.mjs.
// Prints a JSON report the Go test checks.
import { drive } from "./harness.mjs";

await drive({ height: 900, prefix: "elicit-" }, async ({ page, report, step, transcript }) => {
  const field = (label) => page.locator("#el-fields .field", { hasText: label });
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
});

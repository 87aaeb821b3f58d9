// Drives the page of `reasonix serve` in a real Chromium: chat, approvals,
// /plan, a question, a reload mid-stream and a resumed session. Env and
// report as harness.mjs.
import { drive } from "./harness.mjs";

await drive({}, async ({ page, report, step, transcript }) => {
  await step("open", async () => {
    await page.goto(process.env.SERVE_URL);
    report.urlAfterLogin = page.url();
    await page.click("#new-session");
    await page.waitForSelector("#input:not([disabled])");
  });
  await step("markdown", async () => {
    await page.fill("#input", "say hello");
    await page.press("#input", "Enter");
    await transcript().locator(".answer strong", { hasText: "world" }).waitFor();
    await transcript().locator(".answer pre code .tok-kw", { hasText: "func" }).waitFor();
    report.answerHTML = await transcript().locator(".answer").first().innerHTML();
  });
  await step("approval", async () => {
    await page.fill("#input", "make the marker file");
    await page.press("#input", "Enter");
    await page.waitForSelector("#approval[open]");
    report.approvalText = await page.locator("#approval").innerText();
    await page.click('#ap-choices button[data-choice="allow"]');
    await transcript().locator(".answer", { hasText: "Made it." }).waitFor();
    report.toolLine = await transcript().locator(".tool").last().innerText();
  });
  await step("plan", async () => {
    await page.fill("#input", "/pl");
    await page.waitForSelector("#menu li");
    report.menu = await page.locator("#menu").innerText();
    await page.press("#input", "Tab");
    await page.type("#input", "add a farewell");
    await page.press("#input", "Enter");
    await page.waitForSelector("#plan[open]");
    report.planText = await page.locator("#plan").innerText();
    await page.click("#plan-approve");
    await transcript().locator(".notice, .worker", { hasText: "Executed the plan." }).first().waitFor();
  });
  await step("question", async () => {
    await page.fill("#input", "style the button");
    await page.press("#input", "Enter");
    await page.waitForSelector("#question[open]");
    report.questionText = await page.locator("#question").innerText();
    await page.click('#q-choices button:has-text("green")');
    await transcript().locator(".answer", { hasText: "Made it GREEN." }).waitFor();
  });
  await step("reload-mid-stream", async () => {
    await page.fill("#input", "count slowly");
    await page.press("#input", "Enter");
    await transcript().locator(".answer", { hasText: "one two" }).waitFor();
    await page.reload();
    await page.waitForSelector(".transcript:not([hidden])");
    await transcript().locator(".answer", { hasText: "ten END" }).waitFor({ timeout: 20000 });
    report.afterReload = await transcript().innerText();
  });
  await step("resume", async () => {
    await page.locator("#saved-sessions li", { hasText: "remember the word" }).click();
    await transcript().locator(".answer", { hasText: "PINEAPPLE noted" }).waitFor();
    report.resumed = await transcript().innerText();
  });
});

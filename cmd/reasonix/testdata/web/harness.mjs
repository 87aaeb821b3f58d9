// The part the page scripts share: it opens the page of `reasonix serve`
// in a headless Chromium through playwright-core, runs the script's steps
// with a screenshot after each, and prints the JSON report the Go test
// checks. Env: SERVE_URL (with the token), CHROMIUM (binary), SHOTS
// (folder for screenshots). A step that throws ends the run, and the
// report says which step.
import { chromium } from "playwright-core";

// drive runs steps({ page, report, step, transcript }). height is the
// viewport's; prefix starts every screenshot's file name.
export async function drive({ height = 800, prefix = "" }, steps) {
  const shots = process.env.SHOTS;
  const report = { steps: [] };
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true, args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1200, height } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const step = async (name, f) => {
    report.current = name;
    await f();
    report.steps.push(name);
    await page.screenshot({ path: `${shots}/${prefix}${report.steps.length}-${name}.png` });
  };
  const transcript = () => page.locator(".transcript:not([hidden])");
  try {
    await steps({ page, report, step, transcript });
  } catch (e) {
    report.error = `${report.current}: ${e.message}`;
    await page.screenshot({ path: `${shots}/${prefix}failed-${report.current}.png` }).catch(() => {});
  }
  report.pageErrors = errors;
  await browser.close();
  process.stdout.write(JSON.stringify(report));
}

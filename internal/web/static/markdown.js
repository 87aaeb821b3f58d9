// A small Markdown renderer for answers: headings, paragraphs, emphasis,
// inline code, links, lists (nested by indent), block quotes, tables,
// rules and fenced code with highlighting. Input is escaped first, so
// model text can never inject markup.
"use strict";

const md = (() => {
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

  const KEYWORDS = new Set(("break case catch class const continue def default defer do elif else enum export extends " +
    "false finally fn for from func function go if impl import in interface let loop match mod new nil none null " +
    "package pub return select self static struct super switch this throw true try type typeof undefined use var " +
    "while with yield async await lambda pass raise except None True False mut trait where chan map range fallthrough " +
    "echo then fi esac done local readonly").split(" "));

  // highlight colours one code block: comments, strings, numbers and
  // keywords of the common languages, enough to read code at a glance.
  function highlight(code, lang) {
    lang = (lang || "").toLowerCase();
    let com = String.raw`\/\/[^\n]*|\/\*[\s\S]*?\*\/`;
    if (/^(py|python|sh|bash|shell|zsh|console|rb|ruby|toml|yaml|yml|r|perl|make|makefile|dockerfile|conf|ini)$/.test(lang)) com = "#[^\\n]*";
    else if (/^(sql|lua|haskell|hs)$/.test(lang)) com = "--[^\\n]*";
    const re = new RegExp(`(${com})|("(?:[^"\\\\\\n]|\\\\.)*"|'(?:[^'\\\\\\n]|\\\\.)*'|\`[^\`]*\`)|(\\b\\d+(?:\\.\\d+)?\\b)|([A-Za-z_][A-Za-z0-9_]*)`, "g");
    let out = "", last = 0, m;
    while ((m = re.exec(code)) !== null) {
      if (m[0] === "") { re.lastIndex++; continue; }
      out += esc(code.slice(last, m.index));
      last = re.lastIndex;
      if (m[1]) out += `<span class="tok-com">${esc(m[1])}</span>`;
      else if (m[2]) out += `<span class="tok-str">${esc(m[2])}</span>`;
      else if (m[3]) out += `<span class="tok-num">${m[3]}</span>`;
      else if (KEYWORDS.has(m[4])) out += `<span class="tok-kw">${m[4]}</span>`;
      else out += esc(m[4]);
    }
    return out + esc(code.slice(last));
  }

  function inline(s) {
    // Code spans first, kept away from the other rules.
    const spans = [];
    s = s.replace(/`([^`]+)`/g, (_, c) => { spans.push(c); return `\u0000${spans.length - 1}\u0000`; });
    s = esc(s);
    s = s.replace(/\[([^\]]+)\]\(((?:https?:\/\/|mailto:|\/|\.)[^\s)]*)\)/g, (_, t, u) => `<a href="${u}" target="_blank" rel="noopener noreferrer">${t}</a>`);
    s = s.replace(/\*\*([^*]+)\*\*|__([^_]+)__/g, (_, a, b) => `<strong>${a || b}</strong>`);
    s = s.replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, "$1<em>$2</em>");
    s = s.replace(/(^|[^_\w])_([^_\n]+)_(?!\w)/g, "$1<em>$2</em>");
    s = s.replace(/~~([^~]+)~~/g, "<del>$1</del>");
    return s.replace(/\u0000(\d+)\u0000/g, (_, i) => `<code>${esc(spans[+i])}</code>`);
  }

  const isTableSep = (l) => /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(l);
  const cells = (l) => l.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());

  function render(src) {
    const lines = src.replace(/\r\n/g, "\n").split("\n");
    let html = "", i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if ((m = /^(\s*)(```|~~~)\s*([\w+-]*)/.exec(line))) {
        const fence = m[2], lang = m[3];
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
        i++; // the closing fence (or the end while streaming)
        html += `<pre><code class="lang-${esc(lang || "text")}">${highlight(body.join("\n"), lang)}</code></pre>`;
        continue;
      }
      if (/^\s*$/.test(line)) { i++; continue; }
      if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
        html += `<h${m[1].length}>${inline(m[2])}</h${m[1].length}>`;
        i++;
        continue;
      }
      if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { html += "<hr>"; i++; continue; }
      if (/^\s*>/.test(line)) {
        const body = [];
        while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ""));
        html += `<blockquote>${render(body.join("\n"))}</blockquote>`;
        continue;
      }
      if (line.includes("|") && i + 1 < lines.length && isTableSep(lines[i + 1])) {
        const head = cells(line);
        i += 2;
        let t = "<table><thead><tr>" + head.map((c) => `<th>${inline(c)}</th>`).join("") + "</tr></thead><tbody>";
        while (i < lines.length && lines[i].includes("|") && lines[i].trim() !== "") {
          t += "<tr>" + cells(lines[i++]).map((c) => `<td>${inline(c)}</td>`).join("") + "</tr>";
        }
        html += t + "</tbody></table>";
        continue;
      }
      if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
        const items = [];
        while (i < lines.length && (/^\s*([-*+]|\d+[.)])\s+/.test(lines[i]) || (/^\s{2,}\S/.test(lines[i]) && items.length))) {
          items.push(lines[i++]);
        }
        html += list(items);
        continue;
      }
      const para = [];
      while (i < lines.length && lines[i].trim() !== "" && !/^(#{1,6}\s|\s*```|\s*~~~|\s*>)/.test(lines[i]) &&
        !/^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) para.push(lines[i++]);
      if (para.length === 0) { html += `<p>${inline(lines[i++])}</p>`; continue; }
      html += `<p>${para.map(inline).join("<br>")}</p>`;
    }
    return html;
  }

  function list(items) {
    const indent = (l) => l.match(/^\s*/)[0].length;
    const base = indent(items[0]);
    const ordered = /^\s*\d/.test(items[0]);
    let html = ordered ? "<ol>" : "<ul>", j = 0;
    while (j < items.length) {
      const text = items[j].replace(/^\s*([-*+]|\d+[.)])\s+/, "");
      j++;
      const sub = [];
      while (j < items.length && indent(items[j]) > base) sub.push(items[j++]);
      const box = /^\[([ xX])\]\s+/.exec(text);
      const body = box ? `<input type="checkbox" disabled${box[1] !== " " ? " checked" : ""}> ${inline(text.slice(box[0].length))}` : inline(text);
      html += `<li>${body}${sub.length ? list(sub) : ""}</li>`;
    }
    return html + (ordered ? "</ol>" : "</ul>");
  }

  return { render, highlight, esc };
})();

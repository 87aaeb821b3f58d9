package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sourceStrings are the string constants of the package's source (and of
// the config package's setup presets, whose labels the setup screen
// shows): literals, literal concatenations and named constants; and the
// constant first arguments of tr, trf, note and notef calls, which must
// have a Chinese label.
func sourceStrings(t *testing.T) (shown map[string]bool, translated map[string]string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	// The config package's setup presets, whose labels the setup screen
	// shows, and the reasons it gives for a held setting, which the trust
	// question shows.
	files = append(files, filepath.Join("..", "config", "setup.go"), filepath.Join("..", "config", "trust.go"))
	fset := token.NewFileSet()
	var parsed []*ast.File
	consts := map[string]string{}
	var fold func(e ast.Expr) (string, bool)
	fold = func(e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		case *ast.BinaryExpr:
			x, ok1 := fold(e.X)
			y, ok2 := fold(e.Y)
			return x + y, ok1 && ok2 && e.Op == token.ADD
		case *ast.ParenExpr:
			return fold(e.X)
		case *ast.Ident:
			s, ok := consts[e.Name]
			return s, ok
		}
		return "", false
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "labels.go" {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, file)
		for _, d := range file.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, sp := range g.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if s, ok := fold(vs.Values[i]); ok {
								consts[n.Name] = s
							}
						}
					}
				}
			}
		}
	}
	shown, translated = map[string]bool{}, map[string]string{}
	for _, file := range parsed {
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit, *ast.BinaryExpr:
				if s, ok := fold(n.(ast.Expr)); ok {
					shown[s] = true
				}
			case *ast.CallExpr:
				if len(n.Args) == 0 {
					break
				}
				var name string
				switch f := n.Fun.(type) {
				case *ast.SelectorExpr:
					name = f.Sel.Name
				case *ast.Ident:
					// config's widening: top(name, why) and sub(table,
					// name, widens, why); the trust question shows why.
					if (f.Name == "top" || f.Name == "sub") && len(n.Args) >= 2 {
						if s, ok := fold(n.Args[len(n.Args)-1]); ok {
							translated[s] = fset.Position(n.Pos()).String()
						}
					}
				}
				if name == "plural" && len(n.Args) == 2 {
					// a.plural(n, what): what is the label.
					n = &ast.CallExpr{Fun: n.Fun, Args: n.Args[1:]}
				}
				switch name {
				case "tr", "trf", "note", "notef", "plural":
					if s, ok := fold(n.Args[0]); ok {
						translated[s] = fset.Position(n.Pos()).String()
					}
				}
			}
			return true
		})
	}
	for _, s := range consts {
		shown[s] = true
	}
	return shown, translated
}

// Every Chinese label is keyed by an English text the package really
// shows (a key that drifted from its label, a reworded English text,
// would leave the label English without a word), and every text the
// package passes through tr, trf, note or notef has a Chinese label (a
// new English notice without one fails here).
func TestChineseLabelsMatchTheirEnglishText(t *testing.T) {
	shown, translated := sourceStrings(t)
	labels := zhLabels.Get()
	for en, zh := range labels {
		if !shown[en] {
			t.Errorf("label %q (%s) is not a string of the package's source", en, zh)
		}
		if strings.Count(en, "%") != strings.Count(zh, "%") {
			t.Errorf("label %q and %q differ in their verbs", en, zh)
		}
		if strings.Count(en, "[") != strings.Count(zh, "[") || strings.Count(en, "\n") != strings.Count(zh, "\n") {
			t.Errorf("label %q and %q differ in their markup or lines", en, zh)
		}
	}
	for en, where := range translated {
		if _, ok := labels[en]; !ok {
			t.Errorf("%s: %q has no Chinese label", where, en)
		}
	}
	// Texts translated through a variable.
	var indirect []string
	for _, p := range []string{"ask", "auto", "yolo"} {
		indirect = append(indirect, postureHelp(p))
	}
	indirect = append(indirect, "chat", "plan", "goal", "compact", cacheWarning, composerPlaceholder, setupIntro, missingKeyIntro,
		trustIntro, trustOutro, "Local server (vLLM, Ollama, llama.cpp)")
	for _, en := range indirect {
		if _, ok := labels[en]; !ok {
			t.Errorf("%q has no Chinese label", en)
		}
	}
	a := New(Options{})
	if a.tr("ready") != "ready" || a.helpFor() != helpText {
		t.Error("an English UI shows translated labels")
	}
	a.SetLanguage("zh_CN")
	if a.tr("ready") != "就绪" || a.helpFor() != helpTextZh || a.tr("no such label") != "no such label" {
		t.Error("SetLanguage(zh_CN) did not switch the labels")
	}
}

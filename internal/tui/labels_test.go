package tui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every Chinese label is keyed by an English text the package really
// shows, written as a Go string literal in a source file: a key that
// drifted from its label (a reworded English text) would leave the label
// English without a word.
func TestChineseLabelsMatchTheirEnglishText(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "labels.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for en, zh := range zhLabels() {
		if !strings.Contains(src.String(), strconv.Quote(en)) {
			t.Errorf("label %q (%s) is not a string of the package's source", en, zh)
		}
		if strings.Count(en, "%") != strings.Count(zh, "%") {
			t.Errorf("label %q and %q differ in their verbs", en, zh)
		}
	}
	a := &App{}
	if a.tr("ready") != "ready" || a.helpFor() != helpText {
		t.Error("an English UI shows translated labels")
	}
	a.SetLanguage("zh_CN")
	if a.tr("ready") != "就绪" || a.helpFor() != helpTextZh || a.tr("no such label") != "no such label" {
		t.Error("SetLanguage(zh_CN) did not switch the labels")
	}
}

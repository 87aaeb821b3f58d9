package providers

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// reflected is encoding/json's encoding of m with HTML escaping off: the
// bytes EncodeMessage must produce.
func reflected(t *testing.T, m Message) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// awkward strings: every escape class encoding/json has.
var awkward = []string{
	"", "plain text", `say "hi" \ there`, "a\nb\rc\td", "<b>&amp;</b>", "\x00\x01\x08\x0c\x1f\x7f",
	"héllo wörld 你好 🎉", "\u2028line\u2029para", "bad \xff utf8 \xe2\x82", "\xed\xa0\x80 surrogate",
	"tab\tand <tag> & \"q\" \u2028 \xc3",
}

func randomString(r *rand.Rand) string {
	pieces := []string{"a", "Z", " ", "\"", "\\", "\n", "\r", "\t", "<", ">", "&", "\x00", "\x1f", "\x7f",
		"é", "你", "🎉", "\u2028", "\u2029", "\xff", "\xe2\x82", "\xed\xa0\x80", "\ufffd", "/"}
	var b strings.Builder
	for n := r.IntN(40); n > 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestEncodeMessageMatchesReflection holds EncodeMessage's hand-written
// bytes equal to encoding/json's for every field and every kind of
// character, so a prefix encoded by either is the same prefix.
func TestEncodeMessageMatchesReflection(t *testing.T) {
	check := func(m Message) {
		t.Helper()
		got, err := EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		w := m
		w.Rules = nil
		if w.ReasoningContent != "" && (w.Role != RoleAssistant || len(w.ToolCalls) == 0) {
			w.ReasoningContent = ""
		}
		if want := reflected(t, w); string(got) != want {
			t.Fatalf("EncodeMessage(%#v)\n got %s\nwant %s", m, got, want)
		}
	}
	for _, s := range awkward {
		check(Message{Role: RoleSystem, Content: s})
		check(Message{Role: RoleTool, Content: s, ToolCallID: s, Name: s})
		check(Message{Role: RoleTool, Content: s, ToolCallID: s, Rules: []string{s, "/r/CLAUDE.md"}}) // Rules never sent
		check(Message{Role: RoleAssistant, Content: s, ReasoningContent: s,
			ToolCalls: []ToolCall{{ID: s, Type: "function", Function: FunctionCall{Name: s, Arguments: s}}, {ID: "2"}}})
		check(Message{Role: RoleAssistant, ReasoningContent: s}) // dropped without tool calls
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		m := Message{Role: randomString(r), Content: randomString(r), ReasoningContent: randomString(r),
			ToolCallID: randomString(r), Name: randomString(r)}
		for k := r.IntN(3); k > 0; k-- {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: randomString(r), Type: randomString(r),
				Function: FunctionCall{Name: randomString(r), Arguments: randomString(r)}})
		}
		check(m)
	}
}

// TestEncodeMessageKnowsEveryField fails when a field is added to the
// wire types: EncodeMessage writes each field by name and would drop it.
// Message's seventh, Rules, is session state it leaves out on purpose.
func TestEncodeMessageKnowsEveryField(t *testing.T) {
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[Message](): 7, reflect.TypeFor[ToolCall](): 3, reflect.TypeFor[FunctionCall](): 2,
	} {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, EncodeMessage writes %d: teach it the new one", typ, typ.NumField(), n)
		}
	}
}

// TestWriteStringMatchesMarshal holds the tool-spec string encoding equal
// to json.Marshal's (HTML escaped), the bytes tool schemas were sent with.
func TestWriteStringMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	strs := append([]string(nil), awkward...)
	for i := 0; i < 3000; i++ {
		strs = append(strs, randomString(r))
	}
	for _, s := range strs {
		var b bytes.Buffer
		if err := writeString(&b, s); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(s)
		if b.String() != string(want) {
			t.Fatalf("writeString(%q) = %s, want %s", s, b.String(), want)
		}
		if q := QuoteJSON(s); string(q) != string(want) {
			t.Fatalf("QuoteJSON(%q) = %s, want %s", s, q, want)
		}
	}
}

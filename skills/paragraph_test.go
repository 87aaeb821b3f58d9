package skills

import "testing"

// TestFirstParagraph: the expected values are what the CommonMark parser
// goldmark (which FirstParagraph once used) finds for the same input.
func TestFirstParagraph(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"# Title\r\n\r\nFirst para\r\ncontinues here.\r\n\r\nSecond.\r\n", "First para continues here."},
		{"<!-- comment\nmore -->\n\nReal text.\n", "Real text."},
		{"<example>\nuser: hi\n</example>\n\nAfter.\n", "After."},
		{"<div>\nblock\n</div>\n\nAfter div.\n", "After div."},
		{"Title\n=====\n\nBody para.\n", "Body para."},
		{"Title\n---\n\nBody para.\n", "Body para."},
		{"---\n\nAfter break.\n", "After break."},
		{"\tcode\n\nText.\n", "Text."},
		{"    code\n\nText.\n", "Text."},
		{"> quote\n> more\n\nText after quote.\n", "Text after quote."},
		{"- a\n- b\n\nText after list.\n", "Text after list."},
		{"1. a\n2. b\n\n   indented cont\n\nText after list.\n", "Text after list."},
		{"```go\ncode\n```\nText after fence.\n", "Text after fence."},
		{"~~~\n~~~\nText.\n", "Text."},
		{"[ref]: http://x\n\nText.\n", "Text."},
		{"[ref]: http://x\nText right after.\n", "Text right after."},
		{"Para line\n# heading interrupts\n", "Para line"},
		{"Para\n- list interrupts\n", "Para"},
		{"Para\n2. no interrupt\n", "Para 2. no interrupt"},
		{"Para\n<div>\n", "Para"},
		{"Para\n<span>\n", "Para <span>"},
		{"  Indented para\n   line two\n", "Indented para line two"},
		{"#NoSpace is text\n", "#NoSpace is text"},
		{"####### seven is text\n", "####### seven is text"},
		{"***\n___\nText\n", "Text"},
		{"* \n\nText after empty item\n", "Text after empty item"},
		{"<span>inline html para</span>\n", "<span>inline html para</span>"},
		{"<custom-tag>\nstuff\n\nText\n", "Text"},
		{"Text with trailing  \nhard break\n", "Text with trailing hard break"},
		{"", ""},
		{"\n\n\n", ""},
		{"# only heading\n", ""},
		{"You are a reviewer.\nReview code carefully.\n\n## Rules\n", "You are a reviewer. Review code carefully."},
		{"<script>\n\nvar x;\n</script>\nText after script\n", "Text after script"},
		{"- item\n\n  para in item\n- item2\nText lazy\n\nFinal text.\n", "Final text."},
	} {
		if got := FirstParagraph([]byte(c.in)); got != c.want {
			t.Errorf("FirstParagraph(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

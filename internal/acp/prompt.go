package acp

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// maxEmbedded bounds one embedded file in a prompt.
const maxEmbedded = 256 << 10

// promptText turns a prompt's content blocks into the turn's text. Text
// is kept as typed; a file the editor embedded (its buffer, unsaved
// changes included) is wrapped with its path; a link names the file so
// the model can read it with its tools. Images and audio are not offered
// in the capabilities and are noted if sent anyway.
func promptText(blocks []sdk.ContentBlock, workspace string) string {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			body := r.Text
			cut := ""
			if len(body) > maxEmbedded {
				body, cut = body[:maxEmbedded], fmt.Sprintf("\n[cut at %d KB of %d KB]", maxEmbedded>>10, len(r.Text)>>10)
			}
			parts = append(parts, fmt.Sprintf("<file path=%q>\n%s%s\n</file>", displayPath(r.Uri, workspace), body, cut))
		case b.Resource != nil:
			parts = append(parts, "[an attached binary resource was left out]")
		case b.ResourceLink != nil:
			parts = append(parts, fmt.Sprintf("[referenced file: %s]", displayPath(b.ResourceLink.Uri, workspace)))
		case b.Image != nil, b.Audio != nil:
			parts = append(parts, "[an attached image or audio clip was left out: this agent reads text only]")
		}
	}
	return strings.Join(parts, "\n\n")
}

// displayPath shows a file URI relative to the workspace when it is
// inside it, else as the absolute path or the URI itself.
func displayPath(uri, workspace string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return uri
	}
	p := filepath.FromSlash(u.Path)
	if rel, err := filepath.Rel(workspace, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return p
}

// Package render implements service.MarkdownRenderer: an article's Markdown body as HTML that is
// safe to show anywhere (a web page, a feed reader, a mail). It is an adapter of its own (like
// media): pure Go, no storage, no transport.
//
// Two layers, each enough on its own for the worst cases: goldmark renders CommonMark with the GFM
// tables, strikethrough and autolinks, never passes raw HTML through (it writes a comment in its
// place) and refuses javascript:, vbscript:, file: and most data: links; bluemonday then keeps
// only the elements and attributes of its user-generated-content policy, tightened below.
package render

import (
	"bytes"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/inkwell-dev/inkwell/domain"
)

// LinkRel is the rel of every link in a rendered body: the author's links earn no ranking
// (nofollow, ugc) and the opened page gets no handle on ours (noopener).
const LinkRel = "nofollow ugc noopener"

// imageSource is what an image may load: an https URL, or one of inkwell's own uploads by its
// path (the key's shape is domain.ValidMediaKey's).
var imageSource = regexp.MustCompile(`^(?:https://[^\s"'<>\\]+|` + regexp.QuoteMeta(domain.MediaPathPrefix) + `[0-9a-f]{64}\.(?:png|jpg|gif))$`)

// Renderer turns Markdown into sanitized HTML. It holds no per-call state: one value serves every
// goroutine.
type Renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

// New returns the renderer.
func New() *Renderer {
	md := goldmark.New(
		goldmark.WithExtensions(
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough, extension.Linkify),
		goldmark.WithParserOptions(
			parser.WithAutoHeadingID(), // stable: the same text gives the same id, a repeat gets "-1", "-2"…
			parser.WithASTTransformers(util.Prioritized(linksAndImages{}, 100)),
		),
	)
	return &Renderer{md: md, policy: policy()}
}

// policy is bluemonday's UGC policy tightened: no URL schemes but http(s) and mailto, images only
// from https or the uploads, links only with LinkRel. UGC already drops script, style, iframe,
// object, embed and form elements, on* and style attributes.
func policy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(true)
	p.RequireNoFollowOnLinks(false)
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w+#.-]+$`)).OnElements("code")
	p.AllowAttrs("rel").Matching(regexp.MustCompile(`^` + LinkRel + `$`)).OnElements("a")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(?:left|center|right)$`)).OnElements("th", "td")
	return p
}

// Render returns markdown as sanitized HTML.
func (r *Renderer) Render(markdown string) string {
	if markdown == "" {
		return ""
	}
	var buf bytes.Buffer
	if err := r.md.Convert(boundNesting([]byte(markdown)), &buf); err != nil {
		// goldmark's writer is a bytes.Buffer: it cannot fail. Should it, the text escaped is
		// still safe and still readable.
		return r.policy.Sanitize(bluemonday.StrictPolicy().Sanitize(markdown))
	}
	return string(r.policy.SanitizeBytes(buf.Bytes()))
}

// linksAndImages sets LinkRel on every link and autolink of the document, and replaces an image
// from anywhere but https or the uploads by its alt text. (Raw HTML never reaches the output, so
// these nodes are the only links and images; the policy checks their URLs once more.)
type linksAndImages struct{}

func (linksAndImages) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	var refused []*ast.Image
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link, *ast.AutoLink:
			n.SetAttributeString("rel", []byte(LinkRel))
		case *ast.Image:
			if !imageSource.Match(n.Destination) {
				refused = append(refused, n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, img := range refused {
		parent := img.Parent()
		for c := img.FirstChild(); c != nil; c = img.FirstChild() {
			parent.InsertBefore(parent, img, c)
		}
		parent.RemoveChild(parent, img)
	}
}

// maxDepth bounds how deeply block containers (quotes, list items) and link brackets may nest:
// goldmark's time grows with the square of the depth (200k ">" or "- > " take seconds, 100k "["
// more than a second), and no article needs more than a few levels. Deeper markers are escaped, so
// they read as text. In the rare code block that nests brackets this deep, the escape shows.
const maxDepth = 16

// boundNesting escapes, on each line, the block container markers beyond maxDepth, and in each
// paragraph the opening brackets beyond maxDepth unclosed ones.
func boundNesting(md []byte) []byte {
	out := make([]byte, 0, len(md)+16)
	for len(md) > 0 {
		line := md
		if i := bytes.IndexByte(md, '\n'); i >= 0 {
			line = md[:i+1]
		}
		md = md[len(line):]
		out = appendBoundedLine(out, line)
	}
	return boundBrackets(out)
}

// appendBoundedLine appends line with its container markers beyond maxDepth escaped.
func appendBoundedLine(out, line []byte) []byte {
	depth, i := 0, 0
	for i < len(line) {
		j := i
		for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		k := markerEnd(line, j)
		if k < 0 {
			break
		}
		if depth == maxDepth {
			out = append(out, line[:j]...)
			return append(append(out, '\\'), line[j:]...)
		}
		depth, i = depth+1, k
	}
	return append(out, line...)
}

// markerEnd returns where the container marker at line[j] ends ("> ", "- ", "1. "), or -1.
func markerEnd(line []byte, j int) int {
	if j >= len(line) {
		return -1
	}
	switch c := line[j]; {
	case c == '>':
		return j + 1
	case c == '-' || c == '+' || c == '*':
		if j+1 < len(line) && (line[j+1] == ' ' || line[j+1] == '\t') {
			return j + 2
		}
	case c >= '0' && c <= '9':
		k := j
		for k < len(line) && k-j < 9 && line[k] >= '0' && line[k] <= '9' {
			k++
		}
		if k+1 < len(line) && (line[k] == '.' || line[k] == ')') && (line[k+1] == ' ' || line[k+1] == '\t') {
			return k + 2
		}
	}
	return -1
}

// boundBrackets escapes the "[" beyond maxDepth unclosed ones; a blank line closes them all.
func boundBrackets(md []byte) []byte {
	if bytes.Count(md, []byte("[")) <= maxDepth {
		return md
	}
	out := make([]byte, 0, len(md)+16)
	depth := 0
	for i, c := range md {
		switch {
		case c == '[' && (i == 0 || md[i-1] != '\\'):
			if depth == maxDepth {
				out = append(out, '\\')
			} else {
				depth++
			}
		case c == ']' && depth > 0:
			depth--
		case c == '\n' && i+1 < len(md) && md[i+1] == '\n':
			depth = 0
		}
		out = append(out, c)
	}
	return out
}

package render_test

import (
	"testing"

	"github.com/inkwell-dev/inkwell/render"
)

// FuzzRender checks that whatever the Markdown, the HTML holds no script, no event handler, no
// script URL and no data URL (make fuzz).
func FuzzRender(f *testing.F) {
	for _, s := range []string{"# h\n\n[a](https://a.example)", "<script>alert(1)</script>", "[x](javascript:alert(1))",
		`<img src=x onerror=alert(1)>`, "![x](data:image/png;base64,AA==)", "[x](jav&#x09;ascript:1)", "| a |\n|-|\n| <b onclick=1>x</b> |"} {
		f.Add(s)
	}
	r := render.New()
	f.Fuzz(func(t *testing.T, md string) {
		if out := r.Render(md); hostile(out) != "" {
			t.Fatalf("Render(%q) = %q: holds %q", md, out, hostile(out))
		}
	})
}

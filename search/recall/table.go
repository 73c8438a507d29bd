package recall

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable prints reports side by side: one row per engine with the overall figures,
// then recall@5 per question category.
func WriteTable(w io.Writer, title string, reports []Report) error {
	cats := categories(reports)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", title)
	fmt.Fprintf(&b, "%-34s %9s %9s %9s %9s", "engine", "questions", "recall@5", "recall@10", "MRR")
	for _, c := range cats {
		fmt.Fprintf(&b, " %13s", fmt.Sprintf("r@5 %s", categoryName(c)))
	}
	b.WriteByte('\n')
	for _, r := range reports {
		fmt.Fprintf(&b, "%-34s %9d %9.3f %9.3f %9.3f", r.Engine, r.All.Questions, r.All.Recall5, r.All.Recall10, r.All.MRR)
		for _, c := range cats {
			fmt.Fprintf(&b, " %13.3f", r.ByCategory[c].Recall5)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func categoryName(c int) string {
	if n := CategoryName(c); n != "" {
		return fmt.Sprintf("%d %s", c, n)
	}
	return fmt.Sprint(c)
}

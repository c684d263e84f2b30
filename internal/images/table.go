package images

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteTable prints imgs as `crictl images` does: one row per tag, with the
// ID cut to 13 characters and the size in decimal units.
func WriteTable(w io.Writer, imgs []Image) error {
	type row struct{ repo, tag, id, size string }
	var rows []row
	for _, img := range imgs {
		id := strings.TrimPrefix(img.ID, "sha256:")
		if len(id) > 13 {
			id = id[:13]
		}
		size := HumanSize(img.Size)
		for _, pair := range repoTagPairs(img) {
			rows = append(rows, row{pair[0], pair[1], id, size})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].repo != rows[j].repo {
			return rows[i].repo < rows[j].repo
		}
		return rows[i].tag < rows[j].tag
	})
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tTAG\tIMAGE ID\tSIZE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.repo, r.tag, r.id, r.size)
	}
	return tw.Flush()
}

// repoTagPairs splits each tag into repository and tag; an untagged image is
// shown by its digest's repository with tag <none>, as crictl does.
func repoTagPairs(img Image) [][2]string {
	var pairs [][2]string
	for _, ref := range img.RepoTags {
		i := strings.LastIndex(ref, ":")
		if i < 0 || strings.Contains(ref[i:], "/") {
			pairs = append(pairs, [2]string{ref, "<none>"})
			continue
		}
		pairs = append(pairs, [2]string{ref[:i], ref[i+1:]})
	}
	if len(pairs) == 0 {
		for _, d := range img.RepoDigests {
			repo, _, _ := strings.Cut(d, "@")
			pairs = append(pairs, [2]string{repo, "<none>"})
		}
	}
	if len(pairs) == 0 {
		pairs = append(pairs, [2]string{"<none>", "<none>"})
	}
	return pairs
}

// HumanSize formats bytes with three significant digits in decimal units
// ("1.23MB"), the format crictl and docker use for image sizes.
func HumanSize(n uint64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	size, i := float64(n), 0
	for size >= 1000 && i < len(units)-1 {
		size /= 1000
		i++
	}
	return fmt.Sprintf("%.3g%s", size, units[i])
}

package index

import (
	"encoding/json"
	"fmt"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
	"github.com/cairnhq/cairn/vector"
)

// SuggestedIVFThreshold is a number of live vectors from which searching
// a group approximately (Options.IVFThreshold) pays: its vectors are filed
// under centroids (k-means, √n lists) shared by every segment, and a
// search scans only the lists nearest the query. Below it, or when the
// option is not set, search is exact.
const SuggestedIVFThreshold = 250_000

// retrainFactor: a group's centroids are trained again once it holds this
// many times the vectors they were trained on.
const retrainFactor = 4

// centroids is one group's centroid set.
type centroids struct {
	name    string
	group   int
	lists   int
	trained int
	data    []float32
	file    *segment.File
}

type centInfo struct {
	Format  int          `json:"format"`
	Group   int          `json:"group"`
	Lists   int          `json:"lists"`
	Trained int          `json:"trained"`
	Space   memory.Space `json:"space"`
}

// trainCentroids trains a group's centroids on its live vectors across
// srcs and writes them as file name.
func trainCentroids(stg storage, name string, group int, srcs []*src, space memory.Space) (*centroids, centRef, error) {
	type ref struct {
		s   *src
		row int
	}
	var rows []ref
	for _, s := range srcs {
		g := &s.p.groups[group]
		for r := range g.rows {
			if s.alive(g.ids[r]) {
				rows = append(rows, ref{s, r})
			}
		}
	}
	data := vector.Train(len(rows), space.Dim, func(i int) []float32 {
		return rows[i].s.p.groups[group].row(rows[i].row, space.Dim)
	}, vector.IVFOptions{Seed: 1})
	c := &centroids{name: name, group: group, lists: len(data) / space.Dim, trained: len(rows), data: data}
	info, _ := json.Marshal(centInfo{Format: Format, Group: group, Lists: c.lists, Trained: c.trained, Space: space})
	fi, err := stg.write(name, kindCentroids, func(w *segment.Writer) error {
		w.Section("info", true, info)
		w.Begin("data", true)
		w.WriteFloat32s(data)
		w.End()
		return nil
	})
	if err != nil {
		return nil, centRef{}, err
	}
	return c, centRef{Group: group, Name: name, Lists: c.lists, Trained: c.trained, Size: fi.Size, TOC: fi.TOC}, nil
}

// centroidsOf reads a mapped centroid set the manifest names.
func centroidsOf(f *segment.File, ref centRef, space memory.Space) (*centroids, error) {
	var info centInfo
	if s := f.Section("info"); s == nil || json.Unmarshal(s.Bytes(), &info) != nil || info.Format != Format || info.Space != space {
		return nil, fmt.Errorf("%w: centroids %s", segment.ErrFormat, ref.Name)
	}
	var data []float32
	var err error
	if s := f.Section("data"); s != nil {
		data, err = segment.Float32s(s.Bytes())
	}
	if err != nil || space.Dim == 0 || info.Lists == 0 || len(data) != info.Lists*space.Dim || info.Group != ref.Group {
		return nil, fmt.Errorf("%w: centroids %s are malformed", segment.ErrCorrupt, ref.Name)
	}
	return &centroids{name: ref.Name, group: info.Group, lists: info.Lists, trained: info.Trained, data: data, file: f}, nil
}

module github.com/cairnhq/cairn/scripts/treesitter/routes

go 1.26.0

require (
	github.com/cairnhq/cairn v0.0.0
	github.com/tetratelabs/wazero v1.12.0
)

require golang.org/x/sys v0.48.0 // indirect

replace github.com/cairnhq/cairn => ../../..

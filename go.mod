module github.com/gpuprice/gpuprice

go 1.26.8

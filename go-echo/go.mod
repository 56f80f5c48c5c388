module echolab/go-echo

go 1.19

module shoal/bench/peers/gochanpool

go 1.19

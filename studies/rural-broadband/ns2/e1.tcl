# E1 (Fig. 1): DropTail's mean queueing delay at B = 400 packets, in ns-2.35.
source [file join [file dirname [file normalize [info script]]] lib run.tcl]
array set c [cell_mean DropTail 0.010 400 0.1475]
puts [format "SCORE E1-droptail-delay-400pkt %.3f" $c(delay_ms)]

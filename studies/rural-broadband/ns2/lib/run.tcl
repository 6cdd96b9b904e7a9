# Shared by the ns2/*.tcl scripts: run lib/cell.tcl in a child ns-2 process per seed
# (one Simulator per process) and average its CELL values.
set ns2_lib [file join [file dirname [file normalize [info script]]]]
# Quick reconstruction: 2 seeds, 100 s runs with a 20 s warm-up (the study's warm-up;
# the paper ran 200 s over 10 seeds [III]).
set ns2_seeds {1 2}
set ns2_duration 100
set ns2_warmup 20
proc cell_mean {qkind target limit d8} {
    global ns2_lib ns2_seeds ns2_duration ns2_warmup
    set sum(delay_ms) 0.0; set sum(drop_pct) 0.0; set sum(util) 0.0
    foreach seed $ns2_seeds {
        set out [exec [info nameofexecutable] [file join $ns2_lib cell.tcl] \
            $qkind $target $limit $seed $ns2_duration $ns2_warmup $d8]
        if {![regexp {CELL delay_ms (\S+) drop_pct (\S+) util (\S+)} $out -> d p u]} {
            error "cell.tcl $qkind $target $limit $seed: no CELL line in: $out"
        }
        set sum(delay_ms) [expr {$sum(delay_ms) + $d}]
        set sum(drop_pct) [expr {$sum(drop_pct) + $p}]
        set sum(util) [expr {$sum(util) + $u}]
        puts "# $qkind target=$target limit=$limit d8=$d8 seed=$seed: delay $d ms, drops $p %, utilisation $u"
    }
    set k [llength $ns2_seeds]
    foreach m {delay_ms drop_pct util} { set r($m) [expr {$sum($m) / $k}] }
    return [array get r]
}

//! Static shortest-path routing by hop count, in memory linear in the network size.
//!
//! The routes are those of a breadth-first search from every destination over the
//! incoming links (in creation order), so among equal-length routes the first one the
//! search finds wins and routes are deterministic. A full table per destination would
//! take nodes² entries (400 M for a 10 000-pair dumbbell), so only *core* destinations
//! get one. A destination with exactly one incoming link `a → d` (a host on an access
//! link) is a *stub*: the search from `d` is the search from `a` plus that link (`d`
//! discovers only `a`, and nothing beyond `a` can discover `d` first), so the route
//! towards `d` is the link `a → d` at `a`, none at `d`, and the route towards `a`
//! everywhere else. A dumbbell then needs two tables (its routers), not one per host.

use std::collections::VecDeque;

pub const NO_ROUTE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
enum Dest {
    /// Index into `Routes::core`.
    Core(u32),
    /// Reached through its only incoming link `link`, from node `via`.
    Stub { via: u32, link: u32 },
}

pub struct Routes {
    dest: Vec<Dest>,
    /// `core[i][v]`: the link from node `v` towards core destination `i`.
    core: Vec<Vec<u32>>,
}

impl Routes {
    /// Routes over `n` nodes and `links` given as (from, to), in creation order.
    pub fn compute(n: usize, links: &[(u32, u32)]) -> Routes {
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, &(_, to)) in links.iter().enumerate() {
            incoming[to as usize].push(i as u32);
        }
        let mut dest = Vec::with_capacity(n);
        let mut core = Vec::new();
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for d in 0..n {
            if let [link] = incoming[d][..] {
                let via = links[link as usize].0;
                if via as usize != d {
                    dest.push(Dest::Stub { via, link });
                    continue;
                }
            }
            let mut routes = vec![NO_ROUTE; n];
            dist.iter_mut().for_each(|x| *x = u32::MAX);
            dist[d] = 0;
            queue.clear();
            queue.push_back(d as u32);
            while let Some(m) = queue.pop_front() {
                for &li in &incoming[m as usize] {
                    let from = links[li as usize].0 as usize;
                    if dist[from] == u32::MAX {
                        dist[from] = dist[m as usize] + 1;
                        routes[from] = li;
                        queue.push_back(from as u32);
                    }
                }
            }
            dest.push(Dest::Core(core.len() as u32));
            core.push(routes);
        }
        Routes { dest, core }
    }

    /// The link from node `at` towards node `dst`, or `NO_ROUTE`.
    #[inline]
    pub fn next_link(&self, at: u32, mut dst: u32) -> u32 {
        // A ring of stubs has no way in from outside: more steps than nodes means `at`
        // is outside it.
        for _ in 0..self.dest.len() {
            match self.dest[dst as usize] {
                Dest::Core(i) => return self.core[i as usize][at as usize],
                Dest::Stub { via, link } => {
                    if at == dst {
                        return NO_ROUTE;
                    }
                    if at == via {
                        return link;
                    }
                    dst = via;
                }
            }
        }
        NO_ROUTE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The full table: a breadth-first search from every destination.
    fn full(n: usize, links: &[(u32, u32)]) -> Vec<Vec<u32>> {
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, &(_, to)) in links.iter().enumerate() {
            incoming[to as usize].push(i as u32);
        }
        let mut t = vec![vec![NO_ROUTE; n]; n];
        for d in 0..n {
            let mut seen = vec![false; n];
            seen[d] = true;
            let mut q = VecDeque::from([d]);
            while let Some(m) = q.pop_front() {
                for &li in &incoming[m] {
                    let from = links[li as usize].0 as usize;
                    if !seen[from] {
                        seen[from] = true;
                        t[from][d] = li;
                        q.push_back(from);
                    }
                }
            }
        }
        t
    }

    #[test]
    fn stub_compression_gives_the_full_tables_routes_on_random_graphs() {
        let mut r = crate::sim::rng::Rng::stream(5, "routing");
        for _ in 0..300 {
            let n = 2 + r.below(12) as usize;
            let mut links = Vec::new();
            for _ in 0..r.below(3 * n as u64) {
                let a = r.below(n as u64) as u32;
                let b = r.below(n as u64) as u32;
                if a != b {
                    links.push((a, b));
                    if r.chance(0.7) {
                        links.push((b, a));
                    }
                }
            }
            let routes = Routes::compute(n, &links);
            let t = full(n, &links);
            for (at, row) in t.iter().enumerate() {
                for (d, &want) in row.iter().enumerate() {
                    assert_eq!(
                        routes.next_link(at as u32, d as u32),
                        want,
                        "{at} -> {d} in {links:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_dumbbell_needs_only_its_routers_tables() {
        // L = 0, R = 1, hosts 2.. alternate left/right, duplex access links.
        let mut links = vec![(0, 1), (1, 0)];
        for h in 2..2002u32 {
            let router = h % 2;
            links.push((h, router));
            links.push((router, h));
        }
        let routes = Routes::compute(2002, &links);
        assert_eq!(routes.core.len(), 2);
        // Left host 2 to right host 3: its access link (index 2), then L->R, then R->3.
        assert_eq!(routes.next_link(2, 3), 2);
        assert_eq!(routes.next_link(0, 3), 0);
        assert_eq!(routes.next_link(1, 3), 5);
        assert_eq!(routes.next_link(3, 3), NO_ROUTE);
    }
}

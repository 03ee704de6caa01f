/* What the kernel's part of nesting a Landlock domain costs: a process
   restricts itself with a first layer of N path rules (as the sandbox's
   domain has), then 200 forked children each add one nested layer that
   handles only REFER and grants it beneath / (what the exec guard makes
   each program do, crates/aq-sandbox/src/nest.rs), timed in the child.
   Usage: cc -O2 -o nest-layer nest-layer.c && ./nest-layer N */
#define _GNU_SOURCE
#include <linux/landlock.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/stat.h>
static long ns(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static int layer(int nrules, const char **dirs, int ndirs, __u64 handled){
  struct landlock_ruleset_attr a={.handled_access_fs=handled};
  int rs=syscall(SYS_landlock_create_ruleset,&a,sizeof a,0); if(rs<0){perror("create");exit(1);}
  for(int i=0;i<nrules;i++){ int fd=open(dirs[i%ndirs],O_PATH|O_CLOEXEC); struct landlock_path_beneath_attr pb={.allowed_access=handled,.parent_fd=fd};
    if(syscall(SYS_landlock_add_rule,rs,LANDLOCK_RULE_PATH_BENEATH,&pb,0)){perror("add");exit(1);} close(fd);}
  long t=ns(); if(syscall(SYS_landlock_restrict_self,rs,0)){perror("restrict");exit(1);} t=ns()-t; close(rs); return (int)(t/1000);
}
int main(int argc,char**argv){
  int n=atoi(argv[1]);
  prctl(PR_SET_NO_NEW_PRIVS,1,0,0,0);
  // distinct dirs
  char base[]="/tmp/aq-nest-XXXXXX"; if(!mkdtemp(base)){perror("mkdtemp");return 1;}
  char **d=malloc(n*sizeof(char*)); for(int i=0;i<n;i++){ d[i]=malloc(64); snprintf(d[i],64,"%s/%d",base,i); mkdir(d[i],0755); }
  layer(n,(const char**)d,n,LANDLOCK_ACCESS_FS_READ_FILE|LANDLOCK_ACCESS_FS_WRITE_FILE|LANDLOCK_ACCESS_FS_READ_DIR|LANDLOCK_ACCESS_FS_REFER|LANDLOCK_ACCESS_FS_EXECUTE);
  // nested layers in children
  long tot=0; int R=200;
  for(int r=0;r<R;r++){ int p[2]; pipe(p); pid_t c=fork(); if(c==0){ const char*root[]={"/"}; long t0=ns(); int us=layer(1,root,1,LANDLOCK_ACCESS_FS_REFER); long t1=ns(); write(p[1],&us,sizeof us); long all=(t1-t0)/1000; write(p[1],&all,sizeof all); _exit(0);} int us; long al; read(p[0],&us,sizeof us); read(p[0],&al,sizeof al); waitpid(c,0,0); close(p[0]);close(p[1]); tot+=al; if(r<3) printf("restrict_self %d us, whole layer %ld us\n",us,al);}
  printf("rules %d: mean whole nested layer %ld us\n", n, tot/R);
  for(int i=0;i<n;i++) rmdir(d[i]);
  rmdir(base);
  return 0;
}

package jdk.internal.vm.annotation;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Compile-time stand-in for the JDK's own annotation of this name (java.base, not exported): the JIT
 * never inlines a method so marked, and honours it only in classes of the boot and platform loaders,
 * where sora's bootstrap bridge lives. Never shipped (scope provided): the JDK's class is the real one.
 */
@Target({ElementType.METHOD, ElementType.CONSTRUCTOR})
@Retention(RetentionPolicy.RUNTIME)
public @interface DontInline {
}
